package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flagsnap/flagsnap/internal/docread"
)

func TestReadDocument(t *testing.T) {
	doc := strings.Repeat("x", 100)
	tests := []struct {
		name  string
		body  string
		size  int64
		limit int64
		over  bool
	}{
		{"announced", doc, 100, 1000, false},
		{"unannounced", doc, -1, 1000, false},
		{"announced short", doc, 10, 1000, false},
		{"announced long", doc, 500, 1000, false},
		{"exactly the bound", doc, -1, 100, false},
		{"exactly the bound, announced", doc, 100, 100, false},
		{"one byte over", doc, -1, 99, true},
		{"one byte over, announced short", doc, 50, 99, true},
		{"empty", "", -1, 10, false},
		{"empty, announced", "", 0, 10, false},
		{"empty within a bound of 0", "", -1, 0, false},
		{"one byte over a bound of 0", "x", -1, 0, true},
		{"a negative bound is 0", "x", -1, -5, true},
		{"no bound", doc, -1, math.MaxInt64, false},
		{"larger than the first piece", strings.Repeat("y", 3*docread.FirstPiece+7), -1, 1 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte a read, so that every piece is filled by many.
			got, over, err := ReadDocument(iotest.OneByteReader(strings.NewReader(tt.body)), tt.size, tt.limit)
			switch {
			case err != nil:
				t.Fatalf("err %v", err)
			case over != tt.over:
				t.Fatalf("over = %v, want %v", over, tt.over)
			case !over && string(got) != tt.body:
				t.Fatalf("read %d bytes, want the %d of the body", len(got), len(tt.body))
			case over && got != nil:
				t.Fatalf("over, with %d bytes", len(got))
			}
		})
	}
}

// A gzip stream cut short is an error, not the document it began: the
// stream's io.ErrUnexpectedEOF is not the end of the body.
func TestReadDocumentTruncatedGzip(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(strings.Repeat(`{"flags":{}} `, 1000)))
	zw.Close()
	cut := zipped.Bytes()[:zipped.Len()/2]
	zr, err := gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	if doc, _, err := ReadDocument(zr, -1, 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadDocument = %d bytes, %v; want io.ErrUnexpectedEOF", len(doc), err)
	}
}

func TestReadDocumentPassesOnAReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom))
	if doc, over, err := ReadDocument(r, -1, 1<<20); !errors.Is(err, boom) || over || doc != nil {
		t.Fatalf("ReadDocument = %q, %v, %v; want the reader's error", doc, over, err)
	}
}

// A reader that fails with an error wrapping io.EOF has not ended: what
// it read is half a document, not one.
func TestReadDocumentWrappedEOFIsAnError(t *testing.T) {
	cut := fmt.Errorf("x: %w", io.EOF)
	r := io.MultiReader(strings.NewReader(`{"flags":`), iotest.ErrReader(cut))
	if doc, over, err := ReadDocument(r, -1, 1<<20); !errors.Is(err, cut) || over || doc != nil {
		t.Fatalf("ReadDocument = %q, %v, %v; want the reader's error", doc, over, err)
	}
}

// A document of the announced size is read into one piece, and returned
// in it, never copied: the piece has room for the document and the byte
// past it that would have seen a longer one. (Counting allocations would
// not tell: the race detector's build adds one for the list of pieces;
// nor would TotalAlloc, which goroutines left by earlier tests add to.)
func TestReadDocumentReadsAnAnnouncedSizeAtOnce(t *testing.T) {
	body := strings.Repeat("z", 300<<10)
	doc, over, err := ReadDocument(iotest.HalfReader(strings.NewReader(body)), int64(len(body)), 1<<20)
	if err != nil || over || string(doc) != body {
		t.Fatalf("ReadDocument = %d bytes, %v, %v", len(doc), over, err)
	}
	if cap(doc) != len(body)+1 {
		t.Errorf("the document came back with room for %d bytes, want %d: the piece it was read into", cap(doc), len(body)+1)
	}
}

// zeros is a reader that never ends.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A reader that never ends is refused having allocated the bound and one
// byte, give or take the slice of pieces: checkRefusalMemory's reasoning,
// with no request around the read to add its own costs.
func TestReadDocumentStopsOneBytePastTheBound(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc, over, err := ReadDocument(zeros{}, -1, testBound)
	runtime.ReadMemStats(&after)
	if err != nil || !over || doc != nil {
		t.Fatalf("ReadDocument = %d bytes, %v, %v; want over", len(doc), over, err)
	}
	checkRefusalMemory(t, after.TotalAlloc-before.TotalAlloc, true)
}
