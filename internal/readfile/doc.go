// Package readfile reads the files a user names (a mapping, a race file,
// a saved result, a shard's part) with a limit on their size and a context
// that stops the read.
//
// Such a name may be anything the system can open: /dev/zero, which never
// ends, or a FIFO, whose very open waits for a writer that may never come.
// A command must neither read without end nor outlive Ctrl-C. So a regular
// file larger than the limit is refused by its size before a byte is
// read, any other file is refused at the first byte past the limit, and a
// cancelled context ends a waiting open or read at once, leaving no
// goroutine behind.
package readfile
