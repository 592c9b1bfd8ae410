package source

import (
	"io"
	"math"
)

const (
	// firstPiece is the first piece a document of unannounced size is
	// read into: most flag documents fit it whole.
	firstPiece = 16 << 10
	// maxPiece caps the pieces that follow, each twice the one before:
	// what the last piece holds beyond the document's end is wasted
	// until the pieces are joined, so it must stay small beside a large
	// document.
	maxPiece = 4 << 20
)

// ReadDocument reads a flag document from r to its end, for a [Fetcher]
// that must not hold more than limit bytes whatever the origin sends (a
// body that announces no length, or gzip that decodes to far more than
// was sent). size is the document's length if the origin announced it,
// or -1; a wrong one costs memory, not correctness. A negative limit
// counts as 0.
//
// When r holds more than limit bytes, ReadDocument stops reading after
// limit+1 and reports over, having allocated those limit+1 bytes and no
// more for them; the caller reports a [*MessageTooLargeError]. A
// document that fits costs the pieces it was read into and one copy, or
// only its piece when its size was announced right.
//
// A buffer that doubles as it fills, as io.ReadAll's and bytes.Buffer's
// do, would hold up to twice the bound when it stops, after allocating
// twice that in all; reading into pieces sized to what is left of the
// bound holds the bound, and only a document that fits is copied whole.
func ReadDocument(r io.Reader, size, limit int64) (doc []byte, over bool, err error) {
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

// readLimit is how much ReadDocument reads at most: one byte past the
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
// that sees its end, or firstPiece when the size is unknown.
func firstPieceSize(size, want int64) int64 {
	if size >= 0 && size < want {
		return size + 1
	}
	return firstPiece
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
