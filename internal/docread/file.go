package docread

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular refuses FIFOs and devices: opening a FIFO blocks until a
// writer appears, and a device such as /dev/zero never ends.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is a file over the bound. Size is its size, or -1 when it
// grew past the bound while it was read.
type TooLargeError struct{ Size, Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("more than %d bytes", e.Limit)
}

// RegularFile reads the regular file at path, refusing anything else (a
// directory with syscall.EISDIR, others with ErrNotRegular, each in an
// *fs.PathError) and a file over limit bytes having read no more than
// that: one that is larger when it is opened is refused unread, and one
// that grows while it is read stops being read one byte past the bound.
func RegularFile(path string, limit int64) ([]byte, error) {
	// Stat before opening: opening a FIFO would block.
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	case fi.Size() > limit:
		return nil, &TooLargeError{Size: fi.Size(), Limit: limit}
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// Read into one piece sized as the file was, if it still is:
	// io.ReadAll's doubling would allocate and copy a large file twice
	// over.
	data, over, err := Read(fh, fi.Size(), limit)
	if over {
		return nil, &TooLargeError{Size: -1, Limit: limit}
	}
	return data, err
}
