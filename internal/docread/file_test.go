package docread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRegularFile(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "flags.json")
	if err := os.WriteFile(doc, []byte(`{"flags": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // the content, when read
		wantErr    func(error) bool
	}{
		{"within the bound", doc, 13, `{"flags": {}}`, nil},
		{"over the bound, unread", doc, 12, "", func(err error) bool {
			var tl *TooLargeError
			return errors.As(err, &tl) && tl.Size == 13 && tl.Limit == 12
		}},
		{"a directory", dir, 1 << 10, "", func(err error) bool { return errors.Is(err, syscall.EISDIR) }},
		{"missing", filepath.Join(dir, "nope"), 1 << 10, "", func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"a device that never ends", "/dev/zero", 1 << 10, "", func(err error) bool { return errors.Is(err, ErrNotRegular) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Lstat(tt.path); err != nil && tt.path == "/dev/zero" {
				t.Skipf("%s: %v", tt.path, err)
			}
			got, err := RegularFile(tt.path, tt.limit)
			switch {
			case tt.wantErr == nil && (err != nil || string(got) != tt.want):
				t.Errorf("%q, %v; want %q", got, err, tt.want)
			case tt.wantErr != nil && (got != nil || !tt.wantErr(err)):
				t.Errorf("%q, %v; want the error of %s", got, err, tt.name)
			}
		})
	}
}
