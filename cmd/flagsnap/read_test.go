package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file the command reads is bounded: a regular file over the bound is
// refused unread, a stream (a device, a pipe) is refused one byte past it,
// and what fits is read whole, as os.ReadFile would; errors read as its
// do.
func TestReadAtMost(t *testing.T) {
	dir := t.TempDir()
	fits := filepath.Join(dir, "fits.json")
	if err := os.WriteFile(fits, []byte(`{"flags": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Sparse: a file past the real bound that costs nothing to make.
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxInput+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // the content, or the error's readError text
	}{
		{"a file that fits", fits, 13, `{"flags": {}}`},
		{"a file one byte over", fits, 12, "more than 12 bytes, the most flagsnap reads of a document"},
		{"a file over the real bound, unread", huge, maxInput, "more than 1073741824 bytes, the most flagsnap reads of a document"},
		{"a device that never ends", "/dev/zero", 1 << 10, "more than 1024 bytes, the most flagsnap reads of a document"},
		{"a device that is empty", "/dev/null", 1 << 10, ""},
		{"a missing file", filepath.Join(dir, "nope.json"), 1 << 10, "no such file or directory"},
		{"a directory", dir, 1 << 10, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasPrefix(tt.path, "/dev/") {
				if _, err := os.Stat(tt.path); err != nil {
					t.Skipf("%s: %v", tt.path, err)
				}
			}
			data, err := readAtMost(tt.path, tt.limit)
			got := string(data)
			if err != nil {
				got = readError(err)
			}
			if got != tt.want {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
}
