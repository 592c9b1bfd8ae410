package source

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A flag file over FileConfig.MaxSize is refused as the other sources
// refuse a document over their bound, the flags in force staying, and
// one back under it is delivered. The refusal names the file by its path
// as configured, relative here, not by the absolute path that is read.
func TestFileOverTheBoundIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: "flags.json", MaxSize: 1024}, nil)
	h.rec.waitUpdate(t, v1)

	large := v2 + strings.Repeat(" ", 4096)
	writeFile(t, path, large)
	err := h.rec.waitLost(t)
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Target != "flags.json" || tl.Size != len(large) || tl.Limit != 1024 || tl.Setting != "FileConfig.MaxSize" {
		t.Fatalf("lost: %#v, want a *MessageTooLargeError of %d bytes over 1024 naming FileConfig.MaxSize and the path as configured", err, len(large))
	}
	if got := updates(h.rec.snapshot()); len(got) != 1 {
		t.Fatalf("updates %q, want only the first document", got)
	}

	writeFile(t, path, v2)
	h.rec.waitUpdate(t, v2)
}

// A file over the bound when it is opened is refused from its size,
// unread: a quarter of the bound is far more than the stat and the error
// cost, and far less than reading into a buffer of the bound would.
func TestReadRegularRefusesALargeFileUnread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(path, make([]byte, oversize), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc, err := readRegular(path, "flags.json", testBound)
	runtime.ReadMemStats(&after)
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Target != "flags.json" || tl.Size != oversize || tl.Limit != testBound || doc != nil {
		t.Fatalf("readRegular = %d bytes, %v; want a *MessageTooLargeError of %d bytes over %d naming flags.json", len(doc), err, oversize, testBound)
	}
	checkRefusalMemory(t, after.TotalAlloc-before.TotalAlloc, false)
}
