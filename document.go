package flagsnap

import (
	"bytes"
	"compress/flate"
	"io"
	"slices"
	"sync/atomic"
)

// docKeeper keeps a flag document for DebugHandler's /flags, whenever the
// handler is made: compressed, by a goroutine of its own, so that neither
// the flags' arrival waits for it nor the document's size stays in the
// heap. Until the compression is done, the document is kept as it came.
type docKeeper struct {
	raw        atomic.Pointer[[]byte]
	compressed atomic.Pointer[[]byte]
}

// keepDocument keeps doc as it came, not copied: sources hand over a
// document they do not keep or change. A nil doc keeps nothing.
func keepDocument(doc []byte) *docKeeper {
	k := &docKeeper{}
	if doc != nil {
		k.raw.Store(&doc)
	}
	return k
}

// compress replaces the document kept with its compressed form, unless
// replaced says that no one will ask for it any more, in which case it is
// dropped. It gives up between pieces once stopped says so (the provider
// shut down), leaving the document as it came.
func (k *docKeeper) compress(replaced, stopped func() bool) {
	raw := k.raw.Load()
	if raw == nil {
		return
	}
	if replaced() {
		k.raw.Store(nil)
		return
	}
	var b bytes.Buffer
	// Writing to memory at a valid level cannot fail.
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	for piece := range slices.Chunk(*raw, compressPiece) {
		if stopped() {
			return
		}
		_, _ = w.Write(piece)
	}
	_ = w.Close()
	z := b.Bytes()
	k.compressed.Store(&z)
	k.raw.Store(nil)
}

// compressPiece is how much compress writes between two looks at whether
// to give up: a few milliseconds of work.
const compressPiece = 1 << 20

// document is the document kept, nil when none was.
func (k *docKeeper) document() ([]byte, error) {
	if z := k.compressed.Load(); z != nil {
		return io.ReadAll(flate.NewReader(bytes.NewReader(*z)))
	}
	if raw := k.raw.Load(); raw != nil {
		return *raw, nil
	}
	return nil, nil
}
