package source

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/fsnotify/fsnotify"
)

const (
	v1 = `{"flags":{"f":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}}}`
	v2 = `{"flags":{"f":{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"off"}}}`
)

func TestFileInitialRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	calls := h.rec.waitUpdate(t, v1)
	if got := calls[0].orig; got != path {
		t.Errorf("Origin = %q, want %q", got, path)
	}
}

func TestFileInPlaceWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	writeFile(t, path, v2)
	calls := h.rec.waitUpdate(t, v2)
	if n := count(calls, "lost"); n != 0 {
		t.Errorf("got %d Lost for a write in place: %v", n, calls)
	}
}

// A writer that pauses half-way leaves a truncated document on disk for a
// while. One that stays put longer than the debounce and the settle read
// may be delivered, since nothing can tell it from a finished file; the
// provider rejects it then because it does not parse, and keeps the flags
// it has. What matters is that the finished document is delivered last.
func TestFileHalfWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	full := v2
	half := full[:len(full)/2]
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(half); err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * testDebounce)
	if _, err := fh.WriteString(full[len(half):]); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}

	calls := h.rec.waitUpdate(t, full)
	for _, u := range updates(calls) {
		if u != v1 && u != half && u != full && u != "" {
			t.Errorf("delivered %q, which the file never held", u)
		}
	}
}

// The settle check itself, with reads scripted so the outcome does not
// depend on timing: content that differs from one read to the next is
// never delivered, and the first content two reads agree on is.
func TestFileSettleRejectsChangingContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	var n atomic.Int64
	h := start(t, FileConfig{Path: path}, func(f *File) {
		f.readFile = func(string) ([]byte, error) {
			i := n.Add(1)
			if i <= 3 {
				return fmt.Appendf(nil, "partial %d", i), nil
			}
			return []byte(v1), nil
		}
	})
	calls := h.rec.waitUpdate(t, v1)
	if got := updates(calls); len(got) != 1 {
		t.Errorf("updates = %q, want only the settled content", got)
	}
}

// A check whose first read catches a write half-way, and whose settled
// content turns out to be what was delivered already, tells the sink
// nothing.
func TestFileSettlesBackToDelivered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	var n atomic.Int64
	h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond}, func(f *File) {
		f.readFile = func(string) ([]byte, error) {
			// Reads 1-2: the first check. Reads 3-5: the second check,
			// which sees the partial content and then v1 twice.
			if n.Add(1) == 3 {
				return []byte("partial"), nil
			}
			return []byte(v1), nil
		}
	})
	h.rec.waitUpdate(t, v1)
	// The sink is called before the next read, so once the third check
	// has begun, the second has said all it was going to.
	h.waitReads(t, 6)
	if got := updates(h.rec.snapshot()); len(got) != 1 {
		t.Errorf("updates = %q, want v1 once", got)
	}
}

// A file that never stops changing is neither delivered nor reported lost.
func TestFileNeverSettles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	var n atomic.Int64
	h := start(t, FileConfig{Path: path, PollInterval: 20 * time.Millisecond}, func(f *File) {
		f.readFile = func(string) ([]byte, error) {
			return fmt.Appendf(nil, "version %d", n.Add(1)), nil
		}
	})
	// Enough reads for several complete checks, each giving up.
	h.waitReads(t, 3*(maxSettleReads+1))
	if calls := h.rec.snapshot(); len(calls) != 0 {
		t.Errorf("sink got %v for content that never settled", calls)
	}
}

// Editors such as vim and JetBrains IDEs, and most atomic-write helpers,
// write a temporary file next to the target and rename it over.
func TestFileRenameOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	tmp := filepath.Join(dir, ".flags.json.tmp")
	writeFile(t, tmp, v2)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	calls := h.rec.waitUpdate(t, v2)
	if n := count(calls, "lost"); n != 0 {
		t.Errorf("got %d Lost for an atomic rename: %v", n, calls)
	}
}

// The layout the kubelet gives a ConfigMap volume, and the way it updates
// one.
func TestFileConfigMapSwap(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	mkdir := func(name, content string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name, "flags.json"), content)
	}
	symlink := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("..2026_01_01", v1)
	symlink("..2026_01_01", "..data")
	symlink("..data/flags.json", "flags.json")

	path := filepath.Join(dir, "flags.json")
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	mkdir("..2026_01_02", v2)
	symlink("..2026_01_02", "..data_tmp")
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_01_01")); err != nil {
		t.Fatal(err)
	}
	calls := h.rec.waitUpdate(t, v2)
	if n := count(calls, "lost"); n != 0 {
		t.Errorf("got %d Lost for an atomic swap: %v", n, calls)
	}

	// A second swap must be seen as well, through the names the first
	// one introduced.
	mkdir("..2026_01_03", v1)
	symlink("..2026_01_03", "..data_tmp")
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_01_02")); err != nil {
		t.Fatal(err)
	}
	h.rec.waitUpdate(t, v1)
}

func TestFileDeleteAndRecreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	err := h.rec.waitLost(t)
	if !errors.Is(err, ErrNotExist) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lost(%v): want ErrNotExist, also matching fs.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("Lost(%v): message does not name %s", err, path)
	}

	// The same bytes as before the loss: recovery is news in itself.
	writeFile(t, path, v1)
	calls := h.rec.waitUpdate(t, v1)
	if got := updates(calls); len(got) != 2 {
		t.Errorf("updates = %q, want the first read and the recovery", got)
	}
}

// A save that deletes the file and writes it anew leaves a moment with no
// file; a check that falls into it looks again before calling the file
// lost.
func TestFileDeleteGapIsNotALoss(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	var n atomic.Int64
	h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond}, func(f *File) {
		f.readFile = func(p string) ([]byte, error) {
			// Reads 1-2: the first check. Read 3 falls into the gap;
			// the file is back, changed, for the reads that follow.
			switch i := n.Add(1); {
			case i <= 2:
				return []byte(v1), nil
			case i == 3:
				return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
			}
			return []byte(v2), nil
		}
	})
	calls := h.rec.waitUpdate(t, v2)
	if got, want := updates(calls), []string{v1, v2}; !slices.Equal(got, want) || count(calls, "lost") != 0 {
		t.Errorf("sink got %v, want the two updates and no Lost", calls)
	}
}

func TestFileMissingAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond}, nil)
	err := h.rec.waitLost(t)
	if !errors.Is(err, ErrNotExist) {
		t.Errorf("Lost(%v): want ErrNotExist", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("Lost(%v): no *fs.PathError in the chain", err)
	}

	// The loss is reported once, however many polls find it still gone.
	h.waitReads(t, h.reads.Load()+5)
	if n := count(h.rec.snapshot(), "lost"); n != 1 {
		t.Errorf("got %d Lost for one loss", n)
	}

	writeFile(t, path, v1)
	h.rec.waitUpdate(t, v1)
}

// An optional file's absence is reported to the sink as any loss, but
// logged at Debug: a WARN only for a loss that is news.
func TestFileOptionalMissingIsNoWarning(t *testing.T) {
	for _, optional := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "flags.json")
		var logs logtest.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil)) // INFO and above
		h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond, Optional: optional, Logger: log}, nil)
		if err := h.rec.waitLost(t); !errors.Is(err, ErrNotExist) {
			t.Errorf("optional %v: Lost(%v), want ErrNotExist", optional, err)
		}
		writeFile(t, path, v1)
		h.rec.waitUpdate(t, v1)
		lost, back := logs.Count(`level=WARN msg="flag file lost"`), logs.Count(`level=INFO msg="flag file readable again"`)
		if want := map[bool]int{false: 1, true: 0}[optional]; lost != want || back != want {
			t.Errorf("optional %v: %d WARN lines of the loss and %d INFO of its end, want %d each:\n%s", optional, lost, back, want, logs.String())
		}
	}
}

func TestFilePermissionDenied(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode 000 does not stop reading on Windows")
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode 000 file anyway; TestFilePermissionDeniedInjected covers this")
	}
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	err := h.rec.waitLost(t)
	if !errors.Is(err, ErrPermission) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Lost(%v): want ErrPermission, also matching fs.ErrPermission", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("Lost(%v): message does not name %s", err, path)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	h.rec.waitUpdate(t, v1)
}

func TestFilePermissionDeniedInjected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	var deny atomic.Bool
	h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond}, func(f *File) {
		read := f.readFile
		f.readFile = func(p string) ([]byte, error) {
			if deny.Load() {
				return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
			}
			return read(p)
		}
	})
	h.rec.waitUpdate(t, v1)

	deny.Store(true)
	err := h.rec.waitLost(t)
	if !errors.Is(err, ErrPermission) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Lost(%v): want ErrPermission, also matching fs.ErrPermission", err)
	}
	if errors.Is(err, ErrNotExist) || errors.Is(err, ErrIsDirectory) {
		t.Errorf("Lost(%v) matches another kind too", err)
	}
	if want := "flag file " + path + ": permission denied"; err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}

	h.waitReads(t, h.reads.Load()+5)
	if n := count(h.rec.snapshot(), "lost"); n != 1 {
		t.Errorf("got %d Lost for one loss", n)
	}

	deny.Store(false)
	calls := h.rec.waitUpdate(t, v1)
	if got := updates(calls); len(got) != 2 {
		t.Errorf("updates = %q, want the first read and the recovery", got)
	}
}

func TestFileIsDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	h := start(t, FileConfig{Path: path}, nil)
	err := h.rec.waitLost(t)
	if !errors.Is(err, ErrIsDirectory) {
		t.Errorf("Lost(%v): want ErrIsDirectory", err)
	}
	if want := "flag file " + path + ": is a directory, not a file"; err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, v1)
	h.rec.waitUpdate(t, v1)
}

// Without events, a change still arrives within about one PollInterval.
func TestFilePollingFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	const poll = 30 * time.Millisecond
	var logs logtest.Buffer
	var attempts atomic.Int64
	h := start(t, FileConfig{Path: path, PollInterval: poll, Logger: logs.Logger()}, func(f *File) {
		f.newWatcher = func() (*fsnotify.Watcher, error) {
			attempts.Add(1)
			return nil, errors.New("no watcher in this test")
		}
	})
	h.rec.waitUpdate(t, v1)

	begin := time.Now()
	writeFile(t, path, v2)
	h.rec.waitUpdate(t, v2)
	// One interval, the settle read, and plenty of slack for the race
	// detector.
	if took := time.Since(begin); took > poll+time.Second {
		t.Errorf("change took %v to arrive with a poll interval of %v", took, poll)
	}
	if n := attempts.Load(); n < 2 {
		t.Errorf("watcher creation attempted %d times, want a retry at each poll", n)
	}
	if n := logs.Count("level=WARN"); n != 1 {
		t.Errorf("logged %d warnings, want one for the missing watcher:\n%s", n, logs.String())
	}
}

// A directory that does not exist yet cannot be watched; polling finds the
// file when it appears, and the watch is taken up again.
func TestFileParentDirectoryMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	path := filepath.Join(dir, "flags.json")
	var logs logtest.Buffer
	h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond, Logger: logs.Logger()}, nil)
	if err := h.rec.waitLost(t); !errors.Is(err, ErrNotExist) {
		t.Errorf("Lost(%v): want ErrNotExist", err)
	}

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, v1)
	h.rec.waitUpdate(t, v1)
	waitForLog(t, &logs, `level=INFO msg="watching the flag file's directory"`, 1)
	if n := logs.Count(`level=WARN msg="cannot watch the flag file's directory`); n != 1 {
		t.Errorf("warned %d times about the unwatchable directory, want once:\n%s", n, logs.String())
	}
}

// Removing the whole directory kills the watch; it must come back with the
// directory.
func TestFileParentDirectoryReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	path := filepath.Join(dir, "flags.json")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, v1)
	var logs logtest.Buffer
	h := start(t, FileConfig{Path: path, PollInterval: 10 * time.Millisecond, Logger: logs.Logger()}, nil)
	h.rec.waitUpdate(t, v1)

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := h.rec.waitLost(t); !errors.Is(err, ErrNotExist) {
		t.Errorf("Lost(%v): want ErrNotExist", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, v2)
	h.rec.waitUpdate(t, v2)
	// The event telling that the old directory is gone may be handled
	// after the poll that found the new file, so the new watch may
	// follow the Update.
	waitForLog(t, &logs, `msg="watching the flag file's directory"`, 2)
}

func TestFileIdenticalRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)

	before := h.reads.Load()
	writeFile(t, path, v1)
	h.waitReads(t, before+1)
	// Calls arrive in order, so an Update for the rewrite would come
	// before the one for this change.
	writeFile(t, path, v2)
	calls := h.rec.waitUpdate(t, v2)
	if got, want := updates(calls), []string{v1, v2}; !slices.Equal(got, want) {
		t.Errorf("updates = %q, want %q", got, want)
	}
}

func TestFileBurst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	// A debounce far above the gap between writes, so that a scheduling
	// hiccup in a loaded test run does not split the burst.
	h := start(t, FileConfig{Path: path, Debounce: 50 * time.Millisecond}, nil)
	h.rec.waitUpdate(t, v1)

	const writes = 50
	before := h.reads.Load()
	var last string
	for i := range writes {
		last = fmt.Sprintf(`{"flags":{},"$comment":"write %02d"}`, i)
		writeFile(t, path, last)
		// Well inside the debounce, yet long enough for each write to be
		// seen on its own if nothing held the reads back.
		time.Sleep(time.Millisecond)
	}
	calls := h.rec.waitUpdate(t, last)
	if n := len(updates(calls)) - 1; n > writes/5 {
		t.Errorf("%d writes in a burst gave %d updates, want far fewer", writes, n)
	}
	// Each write is two events (truncate, write); reading on every event
	// would read far more often than this.
	if n := h.reads.Load() - before; n > writes/5 {
		t.Errorf("%d writes in a burst caused %d reads, want them debounced", writes, n)
	}
	t.Logf("%d writes: %d updates, %d reads", writes, len(updates(calls))-1, h.reads.Load()-before)
}

func TestFileShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)
	if took := h.stop(t); took > time.Second {
		t.Errorf("Run took %v to return after cancel", took)
	}
}

// Cancelling while a check waits between two reads must not wait for the
// check to finish.
func TestFileShutdownWhileSettling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	var n atomic.Int64
	// A settle wait of 2s, twice the bound below, which leaves a loaded
	// machine plenty of room to return promptly.
	h := start(t, FileConfig{Path: path, Debounce: 4 * time.Second}, func(f *File) {
		f.readFile = func(string) ([]byte, error) {
			return fmt.Appendf(nil, "version %d", n.Add(1)), nil
		}
	})
	h.waitReads(t, 1)
	if took := h.stop(t); took > time.Second {
		t.Errorf("Run took %v to return after cancel, inside a 2s settle wait", took)
	}
}

func TestFileRunContextAlreadyDone(t *testing.T) {
	f, err := NewFile(FileConfig{Path: filepath.Join(t.TempDir(), "flags.json")})
	if err != nil {
		t.Fatal(err)
	}
	calls, err := runAlone(t, f, true)
	if err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if len(calls) != 0 {
		t.Errorf("sink got %v after the context was done", calls)
	}
}

func TestFileRunTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, v1)
	h := start(t, FileConfig{Path: path}, nil)
	h.rec.waitUpdate(t, v1)
	calls, err := runAlone(t, h.f, false)
	if err == nil {
		t.Error("second Run returned nil, want an error")
	}
	if len(calls) != 0 {
		t.Errorf("second Run called its sink: %v", calls)
	}
}

func TestNewFile(t *testing.T) {
	tests := []struct {
		name         string
		cfg          FileConfig
		wantErr      string // a substring; empty means success
		wantPoll     time.Duration
		wantDebounce time.Duration
	}{
		{name: "defaults", cfg: FileConfig{Path: "flags.json"},
			wantPoll: 5 * time.Second, wantDebounce: 50 * time.Millisecond},
		{name: "explicit", cfg: FileConfig{Path: "/etc/flags.json", PollInterval: time.Minute, Debounce: time.Millisecond},
			wantPoll: time.Minute, wantDebounce: time.Millisecond},
		{name: "missing file is fine", cfg: FileConfig{Path: "/does/not/exist/flags.json"},
			wantPoll: 5 * time.Second, wantDebounce: 50 * time.Millisecond},
		{name: "empty path", cfg: FileConfig{}, wantErr: "Path"},
		{name: "negative poll", cfg: FileConfig{Path: "f", PollInterval: -time.Second}, wantErr: "PollInterval"},
		{name: "negative debounce", cfg: FileConfig{Path: "f", Debounce: -1}, wantErr: "Debounce"},
		{name: "negative size bound", cfg: FileConfig{Path: "f", MaxSize: -1}, wantErr: "MaxSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFile(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewFile(%+v) = %v, want an error naming %s", tt.cfg, err, tt.wantErr)
				}
				if f != nil {
					t.Errorf("NewFile returned a File along with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("NewFile(%+v): %v", tt.cfg, err)
			}
			if f.Path() != tt.cfg.Path {
				t.Errorf("Path() = %q, want %q", f.Path(), tt.cfg.Path)
			}
			if f.poll != tt.wantPoll || f.debounce != tt.wantDebounce {
				t.Errorf("poll, debounce = %v, %v; want %v, %v", f.poll, f.debounce, tt.wantPoll, tt.wantDebounce)
			}
			if f.settle < minSettle {
				t.Errorf("settle = %v, below %v", f.settle, minSettle)
			}
		})
	}
}

func TestFileErrorKinds(t *testing.T) {
	const path = "/etc/flags.json"
	tests := []struct {
		name  string
		cause error
		kind  error
		msg   string
	}{
		{"not exist", &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}, ErrNotExist,
			"flag file /etc/flags.json: no such file"},
		{"permission", &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}, ErrPermission,
			"flag file /etc/flags.json: permission denied"},
		{"other", &fs.PathError{Op: "read", Path: path, Err: errors.New("input/output error")}, nil,
			"flag file /etc/flags.json: input/output error"},
		{"not regular", &fs.PathError{Op: "open", Path: path, Err: errNotRegular}, nil,
			"flag file /etc/flags.json: not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newFileError(path, tt.cause)
			if err.Error() != tt.msg {
				t.Errorf("message = %q, want %q", err, tt.msg)
			}
			if !errors.Is(err, tt.cause) {
				t.Errorf("%v does not wrap its cause", err)
			}
			for _, k := range []error{ErrNotExist, ErrPermission, ErrIsDirectory} {
				if got, want := errors.Is(err, k), k == tt.kind; got != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", err, k, got, want)
				}
			}
		})
	}
	if !errors.Is(ErrNotExist, fs.ErrNotExist) || !errors.Is(ErrPermission, fs.ErrPermission) {
		t.Error("the sentinels do not match their io/fs counterparts")
	}
}

func TestReadRegularRefusesFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	path := filepath.Join(t.TempDir(), "flags.json")
	if err := mkfifo(path); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	if _, err := readRegular(path, path, 1<<20); !errors.Is(err, errNotRegular) {
		t.Errorf("readRegular(FIFO) = %v, want %v", err, errNotRegular)
	}
}

func TestLinkNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// An absolute link only matches dir when dir is spelled without
	// symlinks, as it is not on macOS (/var is /private/var).
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(err)
	must(os.Mkdir(filepath.Join(dir, "..2026_11_22_10_00_00.123"), 0o755))
	writeFile(t, filepath.Join(dir, "..2026_11_22_10_00_00.123", "flags.json"), v1)
	must(os.Symlink("..2026_11_22_10_00_00.123", filepath.Join(dir, "..data")))
	must(os.Symlink("..data/flags.json", filepath.Join(dir, "flags.json")))
	must(os.Symlink(filepath.Join(dir, "flags.json"), filepath.Join(dir, "abs.json")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))
	writeFile(t, filepath.Join(dir, "plain.json"), v1)
	must(os.Symlink("sub/../plain.json", filepath.Join(dir, "dotdot.json")))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))

	configMap := []string{"flags.json", "..data", "..2026_11_22_10_00_00.123"}
	tests := []struct {
		base string
		want []string
	}{
		{"flags.json", configMap},
		{"abs.json", append([]string{"abs.json"}, configMap...)},
		{"plain.json", []string{"plain.json"}},
		{"missing.json", []string{"missing.json"}},
		{"loop1", []string{"loop1", "loop2"}},
		{"dotdot.json", []string{"dotdot.json", "sub", "plain.json"}},
	}
	for _, tt := range tests {
		got := linkNames(dir, tt.base)
		if len(got) != len(tt.want) {
			t.Errorf("linkNames(%s) = %v, want %v", tt.base, got, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !got[w] {
				t.Errorf("linkNames(%s) = %v, want %v", tt.base, got, tt.want)
				break
			}
		}
	}
}

func TestRelevant(t *testing.T) {
	dir := t.TempDir()
	r := &runner{
		f:     &File{path: "flags.json", log: new(logtest.Buffer).Logger()},
		dir:   dir,
		names: map[string]bool{"flags.json": true, "..data": true},
	}
	var err error
	if r.watcher, err = fsnotify.NewWatcher(); err != nil {
		t.Skipf("no watcher: %v", err)
	}
	defer r.watcher.Close()
	r.watching = true

	tests := []struct {
		ev   fsnotify.Event
		want bool
	}{
		{fsnotify.Event{Name: filepath.Join(dir, "flags.json"), Op: fsnotify.Write}, true},
		{fsnotify.Event{Name: filepath.Join(dir, "flags.json"), Op: fsnotify.Chmod}, true},
		{fsnotify.Event{Name: filepath.Join(dir, "..data"), Op: fsnotify.Create}, true},
		{fsnotify.Event{Name: filepath.Join(dir, "..data_tmp"), Op: fsnotify.Rename}, false},
		{fsnotify.Event{Name: filepath.Join(dir, "other.json"), Op: fsnotify.Write}, false},
		{fsnotify.Event{Name: filepath.Join(dir, "sub", "flags.json"), Op: fsnotify.Write}, false},
		{fsnotify.Event{Name: dir, Op: fsnotify.Remove}, true},
	}
	for _, tt := range tests {
		if got := r.relevant(tt.ev); got != tt.want {
			t.Errorf("relevant(%v) = %v, want %v", tt.ev, got, tt.want)
		}
	}
	if r.watching {
		t.Error("still considered watching after the directory was removed")
	}
}

// A file nobody has written to for a settle period is read once: it cannot
// be half-written, and a provider starting from it should not wait. A file
// written just now is read again until two reads agree.
func TestFileAtRestIsReadOnce(t *testing.T) {
	t.Run("at rest", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flags.json")
		writeFile(t, path, v1)
		old := time.Now().Add(-time.Minute)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		h := start(t, FileConfig{Path: path}, nil)
		h.rec.waitUpdate(t, v1)
		if n := h.reads.Load(); n != 1 {
			t.Errorf("%d reads for a file at rest, want 1", n)
		}
	})
	t.Run("just written", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flags.json")
		writeFile(t, path, v1)
		h := start(t, FileConfig{Path: path, Debounce: time.Second}, nil)
		h.rec.waitUpdate(t, v1)
		if n := h.reads.Load(); n < 2 {
			t.Errorf("%d read for a file written %v ago, want a settle read", n, time.Second/2)
		}
	})
	t.Run("whole seconds only", func(t *testing.T) {
		// A modification time without a sub-second part may come from a
		// file system that hides a write of the last second.
		path := filepath.Join(t.TempDir(), "flags.json")
		writeFile(t, path, v1)
		old := time.Now().Add(-time.Minute).Truncate(time.Second)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		h := start(t, FileConfig{Path: path}, nil)
		h.rec.waitUpdate(t, v1)
		if n := h.reads.Load(); n < 2 {
			t.Errorf("%d read for a whole-second modification time, want a settle read", n)
		}
	})
}
