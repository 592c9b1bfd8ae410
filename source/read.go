package source

import (
	"io"

	"github.com/flagsnap/flagsnap/internal/docread"
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
	return docread.Read(r, size, limit)
}
