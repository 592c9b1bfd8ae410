package main

// serve --override: what every served file sends is that file with the
// overrides over it, and a change of an override is pushed as a change of
// the files is.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"sync"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

// layering is what serve sends for each file: the file's last good
// document with the overrides' last good documents over it. The watchers
// of the files and of the overrides each call it from a goroutine of
// their own; mu keeps a file from being sent with half of a change.
type layering struct {
	out io.Writer
	log *slog.Logger

	mu        sync.Mutex
	srv       *syncserver.Server // nil until serving
	files     []layeredFile
	overrides []overrideDoc
}

// layeredFile is one served file, its document and flags the last good
// ones, and what was last sent for it: that document with the overrides
// over it.
type layeredFile struct {
	servedFile
	sent []byte
}

// newLayering reads the overrides at paths over the files as read. A
// missing override is no overrides until it appears, as with
// WithOverrideFile; one that is broken or unreadable stops serve before it
// serves, as a broken FILE does.
func newLayering(files []servedFile, paths []string, out io.Writer, log *slog.Logger) (*layering, error) {
	l := &layering{out: out, log: log}
	for _, path := range paths {
		doc, err := readOverride(path)
		o := overrideDoc{path: path}
		if err == nil && doc != nil {
			o, err = readyOverride(path, doc)
		}
		if err != nil {
			return nil, err
		}
		if o.doc == nil {
			log.Info(overrideAbsent, "override", path)
		}
		l.overrides = append(l.overrides, o)
	}
	for _, f := range files {
		l.files = append(l.files, layeredFile{servedFile: f})
	}
	over := overlayFlags(l.overrides)
	for i := range l.files {
		f := &l.files[i]
		var err error
		if f.sent, _, err = l.layered(f, over); err != nil {
			return nil, fmt.Errorf("%s with its overrides: %v", f.path, err)
		}
	}
	return l, nil
}

// overrideAbsent is logged when an override file is found not to exist:
// when serve starts, and when it is deleted.
const overrideAbsent = "override file absent: serving without it until it exists"

// newOverrideWatcher is the sink of the j-th override's file.
func (l *layering) newOverrideWatcher(j int, follower *flagFollower) *overrideWatcher {
	return &overrideWatcher{lay: l, j: j, follower: follower}
}

// override is the j-th override's state in force: its path, and the
// document last put in force, nil while its file is known not to exist.
func (l *layering) override(j int) overrideDoc {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.overrides[j]
}

// fileDoc is the i-th file's document in force: the last good one, as
// setFile puts back the one before when sending fails.
func (l *layering) fileDoc(i int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.files[i].doc
}

// flagsFor are the flags of over, the overrides' flags, that go into
// file f, and how many of them f does not define: those of the keys f
// defines, and those of the keys no served file defines, which go into
// every file so that whatever flag set or file a follower selects has
// them. Giving f a key that only another file defines would make f a
// source of that flag, and in flagd's store the later of two files with
// the same flag takes it from the other's selection. Under l.mu, or
// before serving.
func (l *layering) flagsFor(f *layeredFile, over []overlayFlag) (flags []overlayFlag, added int) {
	for _, o := range over {
		switch {
		case f.set.Index(o.key) >= 0:
			flags = append(flags, o)
		case !l.defined(o.key):
			flags = append(flags, o)
			added++
		}
	}
	return flags, added
}

// defined tells whether a served file defines key.
func (l *layering) defined(key string) bool {
	return slices.ContainsFunc(l.files, func(f layeredFile) bool { return f.set.Index(key) >= 0 })
}

// setFile puts the i-th file's new document in force and sends it with
// the overrides over it. The other files are sent again too, in the same
// change: which of the overrides' flags go into them depends on the keys
// this one defines.
func (l *layering) setFile(i int, doc []byte, set *evaluator.FlagSet) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := &l.files[i]
	prevDoc, prevSet := f.doc, f.set
	f.doc, f.set = doc, set
	if err := l.send(i); err != nil {
		f.doc, f.set = prevDoc, prevSet
		return err
	}
	return nil
}

// setOverride puts the j-th override's new state in force and sends each
// file whose document it changes.
func (l *layering) setOverride(j int, o overrideDoc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.overrides[j] = o
	if err := l.send(-1); err != nil {
		fmt.Fprintf(l.out, "%s: not sent: %v\n", o.path, err)
	}
}

// send hands the server, in one change, every file whose document with
// the overrides over it differs from what it sent last: a follower sees
// all of a change or none of it. A file that cannot be layered keeps what
// it had and says so, unless it is the changed-th, whose error stops
// everything. Under l.mu.
func (l *layering) send(changed int) error {
	over := overlayFlags(l.overrides)
	docs := map[string][]byte{}
	flags := make([]int, len(l.files))
	for i := range l.files {
		f := &l.files[i]
		doc, n, err := l.layered(f, over)
		switch {
		case err != nil && i == changed:
			return err
		case err != nil:
			fmt.Fprintf(l.out, "%s: not sent: %v\n", f.path, err)
		case !bytes.Equal(doc, f.sent):
			docs[f.path], flags[i] = doc, n
		}
	}
	if len(docs) == 0 {
		return nil
	}
	if err := l.srv.SetSources(docs); err != nil {
		return err
	}
	for i := range l.files {
		f := &l.files[i]
		if doc, ok := docs[f.path]; ok {
			f.sent = doc
			fmt.Fprintf(l.out, "%s: sent %s (%s open)\n", f.path, plural(flags[i], "flag"), plural(l.srv.Streams(), "stream"))
		}
	}
	return nil
}

// layered is what is sent for f: its document with the flags of over
// (the overrides' flags) that go into it laid over it, and how many
// flags that holds. Under l.mu, or before serving.
func (l *layering) layered(f *layeredFile, over []overlayFlag) (doc []byte, flags int, err error) {
	mine, added := l.flagsFor(f, over)
	doc, err = overlay(f.doc, mine)
	return doc, f.set.Len() + added, err
}

// overrideWatcher follows the j-th override file. The file source calls
// it from one goroutine, and only it changes that override, so what it
// reads of it from lay stays true until it changes it.
type overrideWatcher struct {
	lay      *layering
	j        int
	follower *flagFollower // nil without --http
}

// Update layers the override's new document, or refuses it whole and
// keeps the last good one, as WithOverrideFile does.
func (w *overrideWatcher) Update(u source.Update) error {
	last := w.lay.override(w.j)
	if last.doc != nil && string(u.Flags) == string(last.doc) {
		return nil // the first read is what serve started with
	}
	flags, err := overrideFlags(u.Flags)
	if err != nil {
		w.lay.log.Error("override refused; its last good flags stay", "override", last.path, "error", err)
		return refused(last.path, err)
	}
	w.lay.log.Info("override loaded", "override", last.path, "flags", len(flags))
	w.lay.setOverride(w.j, overrideDoc{path: last.path, doc: u.Flags, flags: flags})
	w.follower.refresh()
	return nil
}

// Lost withdraws the override when its file no longer exists, logging
// that once; any other failure keeps its last good flags.
func (w *overrideWatcher) Lost(err error) {
	last := w.lay.override(w.j)
	if !errors.Is(err, fs.ErrNotExist) {
		w.lay.log.Error("override unreadable; its last good flags stay", "override", last.path, "error", err)
		return
	}
	if last.doc == nil {
		return
	}
	w.lay.log.Info(overrideAbsent, "override", last.path)
	w.lay.setOverride(w.j, overrideDoc{path: last.path})
	w.follower.refresh()
}

func (w *overrideWatcher) Fatal(err error) {
	w.lay.log.Error("override no longer followed; its last good flags stay", "override", w.lay.override(w.j).path, "error", err)
}
