package docread

import (
	"io"
	"math"
)

const (
	// FirstPiece is the first piece a document of unannounced size is
	// read into: most flag documents fit it whole.
	FirstPiece = 16 << 10
	// maxPiece caps the pieces that follow, each twice the one before:
	// what the last piece holds beyond the document's end is wasted
	// until the pieces are joined, so it must stay small beside a large
	// document.
	maxPiece = 4 << 20
)

// Read reads a document from r to its end, holding no more than limit
// bytes whatever r holds; it is source.ReadDocument, whose comment says
// how, kept here for the readers outside that package too.
func Read(r io.Reader, size, limit int64) (doc []byte, over bool, err error) {
	want := readLimit(limit)
	var pieces [][]byte
	var total int64
	for next := firstPieceSize(size, want); total < want; next = min(2*next, maxPiece) {
		piece := make([]byte, min(next, want-total))
		n, end, err := fill(r, piece)
		if err != nil {
			return nil, false, err
		}
		total += int64(n)
		pieces = append(pieces, piece[:n])
		if end {
			return join(pieces, total), false, nil
		}
	}
	return nil, true, nil
}

// fill reads from r until p is full or r ends. Only io.EOF itself is the
// end: io.ReadFull would also take for it the io.ErrUnexpectedEOF of a
// gzip stream cut short, and deliver half a document. An error that
// wraps io.EOF is a failure, as the io.Reader contract has it.
func fill(r io.Reader, p []byte) (n int, end bool, err error) {
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		switch {
		case err == io.EOF:
			return n, true, nil
		case err != nil:
			return n, false, err
		}
	}
	return n, false, nil
}

// readLimit is how much Read reads at most: one byte past the
// bound, which tells a document of exactly the bound from a larger one.
func readLimit(limit int64) int64 {
	if limit < 0 {
		return 1 // as for a limit of 0
	}
	if limit == math.MaxInt64 {
		return limit // no byte past it to read: nothing can be larger
	}
	return limit + 1
}

// firstPieceSize sizes the first piece: the announced size and one byte,
// so that a document that is what it announced is read into one piece
// that sees its end, or FirstPiece when the size is unknown.
func firstPieceSize(size, want int64) int64 {
	if size >= 0 && size < want {
		return size + 1
	}
	return FirstPiece
}

// join returns the pieces as one slice: the piece itself when there is
// one, which spares a copy of every document that was read at once.
func join(pieces [][]byte, total int64) []byte {
	if len(pieces) == 1 {
		return pieces[0]
	}
	doc := make([]byte, 0, total)
	for _, p := range pieces {
		doc = append(doc, p...)
	}
	return doc
}
