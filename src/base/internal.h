/* internal.h: SP_INTERNAL, the mark of a symbol that is the library's own
 * though more than one of its files (or its tests) use it: the test seams
 * (sys.h's sp_sys table, parallel.h's sp_run_thread_create).  ELF's
 * hidden visibility: a shared library built from the core leaves it out
 * of its dynamic symbols, so a program that links the library can neither
 * see nor swap it; a static link (the programs', the tests') reaches it
 * as any other symbol, so the tests keep their seams.  No export list
 * needs to name it to keep it out. */
#ifndef SP_INTERNAL_H
#define SP_INTERNAL_H

#define SP_INTERNAL __attribute__((visibility("hidden")))

#endif
