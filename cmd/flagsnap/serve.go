package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/source"
	"github.com/flagsnap/flagsnap/syncserver"
)

const serveUsage = `Usage: flagsnap serve FILE [--addr 127.0.0.1:8015] [--socket PATH] [--tls-cert F --tls-key F]
                      [--selector-dir DIR] [--context-value KEY=VALUE]... [--http ADDR]
                      [--allow-origin ORIGIN]... [--context-from-header HEADER=ATTRIBUTE]...
                      [--poll-interval 5s] [--header 'NAME: VALUE']... [--authorization-file F]
                      [--override PATH]...

Serves a flag file over flagd.sync.v1 (the protocol of flagd's sync port),
so that a provider in in-process mode can be tried without flagd: every
change to the file is pushed to every stream whose flags it changes. A
change that does not parse is reported and not sent; the streams keep the
last good flags. With --selector-dir, every JSON or YAML file in DIR (when
serve starts) is served and watched too, as if flagd were started with
-f file:FILE -f file:DIR/a.json ... in that order. Selectors are read as
flagd reads them:
  (none)             every flag of every file; of two flags with the same
                     key and flag set, the later file's
  flagSetId=ID       the flags whose flagSetId (in their own metadata, or
                     else in their file's) is ID; flagSetId= those without
  source=NAME, NAME  the flags of the file NAME: its name, its path or its
                     file: URI
--context-value sets the sync context sent with the flags and the
GetMetadata answer, as flagd's option of that name does. Each follower's
stream is logged when it opens and when its first flag set is sent, with
the follower's address, provider id and selector.

With --override PATH (repeatable, a later one winning), every file is
served with PATH's flags over its own, as flagsnap.WithOverrideFile
layers them: a flag key PATH defines replaces that whole flag, on the
sync port, at /flags.json and over OFREP alike (with several files, in
each file that defines the key; a key no file defines, in every file).
An override's $refs resolve in its own $evaluators (they are substituted
into its flags) and its flags carry its metadata, over the served
file's. Each override is watched: a change is pushed as a change of the
files is, every file it touches in one change, so that a follower never
sees some of them changed and not the others; a broken one is logged and its last good flags stay (broken
when serve starts, it stops serve); a missing one is logged once and
means no overrides from it until it appears.

With --http ADDR, the flags are also served over plain HTTP (without TLS,
even with --tls-cert), for a fleet or a CDN to poll:
  GET /flags.json             what a stream without a selector is sent
  GET /flags.json?selector=S  what a stream with selector S is sent; a
                              selector the sync port refuses gets 404
Each answer has a strong ETag and Cache-Control: no-cache, so that a poll
with If-None-Match costs a 304 until the file changes, and is gzipped when
the request accepts gzip. The answers of at most 1,000 selectors are kept
until the next change; the others are made for each request. The sync
context is not part of the answer.

The same address answers OFREP, the OpenFeature Remote Evaluation
Protocol, for the flags a stream without a selector is sent:
  POST /ofrep/v1/evaluate/flags/KEY  one flag, for the request's context
  POST /ofrep/v1/evaluate/flags      every flag, with an ETag; 304 when
                                     If-None-Match names the current one
  GET  /ofrep/v1/events              server-sent events: refetchEvaluation
                                     at every change of the flags
The request body is {"context": {...}}. --context-value is part of every
context too; --context-from-header HEADER=ATTRIBUTE (repeatable, as
flagd's option of that name) copies a request header into it. Browsers
on the origins of --allow-origin (repeatable, * for any) may call OFREP;
others get no CORS headers.

FILE may also be an http or https URL, followed as flagsnap.WithURL
follows it: asked every --poll-interval with If-None-Match, with the
--header and --authorization-file given; or an object in a bucket,
s3://bucket/key?region=R, gs://bucket/key or azblob://container/key,
followed as the blob module follows it, with the credentials of the
environment. Changes are pushed to the streams, and failures reported
while the last good flags stay served. So several serve replicas can
front one origin (a bucket, a CDN).

Example:
  flagsnap serve flags.json
  then, in a program:
    flagsnap.NewProvider(flagsnap.WithResolver(flagsnap.ResolverInProcess),
        flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(8015))
  flagsnap serve flags.json --http 127.0.0.1:8016
  then: curl 'http://127.0.0.1:8016/flags.json?selector=flagSetId=shop'
  flagsnap serve flags.json --override kill-switch.json
  flagsnap serve flags.json --http 127.0.0.1:8016 --context-from-header X-User-Email=email \
      --allow-origin https://app.example.com
  then: curl -H 'Content-Type: application/json' -H 'X-User-Email: ana@example.com' \
          -d '{"context": {"targetingKey": "user-1"}}' \
          http://127.0.0.1:8016/ofrep/v1/evaluate/flags/new-checkout
  flagsnap serve https://config.example.com/flags.json --http 127.0.0.1:8016
  flagsnap serve 's3://my-bucket/flags.json?region=eu-west-1' --http 127.0.0.1:8016
`

// serveAddr is --addr's default: the port a provider in in-process mode
// dials when given none, so that the two meet without configuration.
// serveUsage repeats it, and --poll-interval's default, in its text; a
// test holds the text to these values.
var serveAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(flagsnap.DefaultInProcessPort))

// contextValues is --context-value, repeatable.
type contextValues map[string]any

func (c contextValues) String() string { return "" }

func (c contextValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, not %q", s)
	}
	c[k] = v
	return nil
}

// servedFile is one watched file, a source of flags under its path as
// given.
type servedFile struct {
	path string
	doc  []byte             // as read when serve started; in a layering, the last good document
	set  *evaluator.FlagSet // doc's flags
}

// sourceNames are the other ways a source selector may name a served file:
// its name, its absolute path and its file: URIs. flagd knows a file source
// only by exactly what followed "file:" in its -f option, which depends on
// the directory it was started in; serve's user cannot be expected to
// guess which form a flagd configuration used.
func (f servedFile) sourceNames() []string {
	if remoteScheme(f.path) != "" {
		return []string{remoteName(f.path)}
	}
	base := filepath.Base(f.path)
	names := []string{base, "file:" + base, "file:" + f.path}
	if abs, err := filepath.Abs(f.path); err == nil {
		names = append(names, abs, "file:"+abs, "file://"+filepath.ToSlash(abs))
	}
	slices.Sort(names)
	return slices.DeleteFunc(slices.Compact(names), func(n string) bool { return n == f.path })
}

// serveFlags is serve's options as given.
type serveFlags struct {
	addr, socket      string
	certFile, keyFile string
	selectorDir       string
	syncCtx           contextValues
	httpAddr          string
	ofrep             ofrepOptions
	remote            remoteOptions
	overrides         overridePaths
}

func (f *serveFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", serveAddr, "TCP address to listen on")
	fs.StringVar(&f.socket, "socket", "", "listen on this unix socket instead of TCP")
	fs.StringVar(&f.certFile, "tls-cert", "", "serve TLS with this certificate (PEM) ...")
	fs.StringVar(&f.keyFile, "tls-key", "", "... and this key (PEM)")
	fs.StringVar(&f.selectorDir, "selector-dir", "", "also serve every flag file in this directory, each a source")
	fs.Var(&f.overrides, "override", overrideUsage)
	f.syncCtx = contextValues{}
	fs.Var(f.syncCtx, "context-value", "KEY=VALUE added to the sync context and GetMetadata (repeatable)")
	fs.StringVar(&f.httpAddr, "http", "", "also serve the flags over HTTP on this address, at /flags.json?selector=S and OFREP at /ofrep/v1/")
	f.ofrep.define(fs)
	// A URL is followed as flagsnap.WithURL follows it, at its pace too.
	fs.DurationVar(&f.remote.pollInterval, "poll-interval", flagsnap.DefaultPollInterval, "when FILE is a URL: how often to ask it for the flags")
	f.remote.header = headerValues{}
	fs.Var(f.remote.header, "header", `when FILE is a URL: "Name: value" sent with every request (repeatable)`)
	fs.StringVar(&f.remote.authFile, "authorization-file", "", "when FILE is a URL: send this file's content as the Authorization header")
}

func (c *cmd) serve(ctx context.Context, args []string) int {
	var f serveFlags
	fs := c.newFlagSet(serveUsage)
	f.define(fs)
	pos, status, ok := c.parseExactly(fs, args, 1, "one FILE")
	if !ok {
		return status
	}
	files, err := f.readFiles(ctx, pos[0], optionGiven(fs, "addr"))
	out := &lockedWriter{w: c.stdout}
	log := serveLogger(out)
	var lay *layering
	if err == nil {
		lay, err = newLayering(files, f.overrides, out, log)
	}
	var srv *syncserver.Server
	if err == nil {
		srv, err = f.startServer(lay.files, log)
	}
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	defer srv.Close()
	lay.srv = srv
	web, follower, err := f.startHTTP(srv, log)
	if err != nil {
		return c.fail(exitBadInput, "%v", err)
	}
	fmt.Fprintf(out, "serving %s on %s%s\n", files[0].path, srv.Addr(), describeSources(files, f.overrides, f.certFile != ""))
	if web != nil {
		defer web.shutdown()
		fmt.Fprintf(out, "serving %s over HTTP on http://%s%s\n", files[0].path, web.addr, flagsPath)
		fmt.Fprintf(out, "serving %s over OFREP on http://%s%sv1/\n", files[0].path, web.addr, ofrepPath)
	}
	return c.watchFiles(ctx, lay, f.remote, follower, out)
}

// startHTTP serves srv's flags over HTTP too when --http asks for it, at
// /flags.json and over OFREP, and returns the follower that keeps OFREP's
// provider on srv's flags; it returns nils otherwise. Stopping the server
// stops the provider, which ends the OFREP event streams: the server
// would otherwise wait for them until it gives up.
func (f *serveFlags) startHTTP(srv *syncserver.Server, log *slog.Logger) (*httpServer, *flagFollower, error) {
	if f.httpAddr == "" {
		return nil, nil, nil
	}
	lis, err := listenHTTP(f.httpAddr)
	if err != nil {
		return nil, nil, err
	}
	follower, err := newFlagFollower(srv, log)
	if err != nil {
		_ = lis.Close()
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(ofrepPath, flagsnap.OFREPHandler(follower.p, f.ofrep.handlerOptions(f.syncCtx)...))
	// Every other path is the flags handler's: it says where the flags are.
	mux.Handle("/", newFlagsHandler(srv, log))
	return serveHTTP(lis, mux, log, follower.shutdown), follower, nil
}

// readFiles checks the options and reads every file to serve, FILE first:
// a file that is not a flag set is refused before anything is served.
func (f *serveFlags) readFiles(ctx context.Context, file string, addrSet bool) ([]servedFile, error) {
	if f.socket != "" && addrSet {
		return nil, errors.New("give --addr or --socket, not both")
	}
	if err := f.ofrep.check(f.httpAddr); err != nil {
		return nil, err
	}
	if f.remote.pollInterval <= 0 {
		return nil, errors.New("--poll-interval must be positive")
	}
	if (f.certFile == "") != (f.keyFile == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	for _, o := range f.overrides {
		if remoteScheme(o) != "" {
			return nil, fmt.Errorf("--override %s: an override is a file, not a URL", o)
		}
	}
	files := []servedFile{{path: file}}
	if f.selectorDir != "" {
		more, err := selectorFiles(f.selectorDir)
		if err != nil {
			return nil, fmt.Errorf("--selector-dir: %v", err)
		}
		// FILE may be in DIR: served twice, it would override itself.
		fileInfo, err := os.Stat(file)
		files = append(files, slices.DeleteFunc(more, func(m servedFile) bool {
			fi, serr := os.Stat(m.path)
			return err == nil && serr == nil && os.SameFile(fileInfo, fi)
		})...)
	}
	for i := range files {
		var err error
		if remoteScheme(files[i].path) != "" {
			files[i].doc, files[i].set, err = f.remote.loadRemote(ctx, files[i].path)
		} else {
			files[i].doc, files[i].set, err = loadFlags(files[i].path)
		}
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// serveLogger writes the server's lines among serve's own, which carry no
// time either.
func serveLogger(w io.Writer) *slog.Logger {
	dropTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: dropTime}))
}

// startServer starts a server with what is sent for each file on the
// address or socket asked for, logging to log.
func (f *serveFlags) startServer(files []layeredFile, log *slog.Logger) (*syncserver.Server, error) {
	opts := []syncserver.Option{syncserver.WithSyncContext(f.syncCtx), syncserver.WithMetadata(f.syncCtx), syncserver.WithLogger(log)}
	for _, file := range files {
		opts = append(opts, syncserver.WithSource(file.path, file.sent, file.sourceNames()...))
	}
	if f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %v", err)
		}
		opts = append(opts, syncserver.WithCertificate(cert))
	}
	srv, err := syncserver.New(opts...)
	if err != nil {
		return nil, err
	}
	if f.socket != "" {
		err = srv.ListenUnix(f.socket)
	} else {
		err = srv.ListenTCP(f.addr)
	}
	if err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
}

// watchFiles pushes every change of the files and of the overrides to
// the streams until ctx ends, or watching a file fails.
func (c *cmd) watchFiles(ctx context.Context, lay *layering, remote remoteOptions, follower *flagFollower, out io.Writer) int {
	watchCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	failed := make(chan error, len(lay.files)+len(lay.overrides))
	watch := func(path string, src source.Source, sink source.Sink) {
		wg.Go(func() {
			if err := src.Run(watchCtx, sink); err != nil {
				failed <- fmt.Errorf("watching %s: %w", path, err)
			}
		})
	}
	for i := range lay.files {
		// Only the path is read, which never changes: a watcher started
		// already may be writing what was sent for every file.
		path := lay.files[i].path
		src, err := remote.openSource(watchCtx, path)
		if err != nil {
			stop()
			wg.Wait()
			return c.fail(exitBadInput, "%v", err)
		}
		watch(path, src, &pusher{lay: lay, i: i, follower: follower, path: path, out: out})
	}
	for j, o := range lay.overrides {
		src, err := source.NewFile(source.FileConfig{Path: o.path})
		if err != nil {
			stop()
			wg.Wait()
			return c.fail(exitBadInput, "%v", err)
		}
		watch(o.path, src, lay.newOverrideWatcher(j, follower))
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-failed:
	}
	stop()
	wg.Wait()
	if runErr != nil {
		return c.fail(exitNegative, "%v", runErr)
	}
	fmt.Fprintln(out, "stopped")
	return exitOK
}

func optionGiven(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func describeSources(files []servedFile, overrides []string, tls bool) string {
	var b strings.Builder
	if tls {
		b.WriteString(" (TLS)")
	}
	if len(files) > 1 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = filepath.Base(f.path)
		}
		fmt.Fprintf(&b, ", sources: %s", strings.Join(names, ", "))
	}
	if len(overrides) > 0 {
		fmt.Fprintf(&b, ", overrides: %s", strings.Join(overrides, ", "))
	}
	return b.String()
}

// selectorFiles lists the flag files of dir in the order of their names.
func selectorFiles(dir string) ([]servedFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", dir, readError(err))
	}
	var out []servedFile
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".json", ".yaml", ".yml":
		default:
			continue
		}
		if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		out = append(out, servedFile{path: filepath.Join(dir, e.Name())})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .json, .yaml or .yml file", dir)
	}
	slices.SortFunc(out, func(a, b servedFile) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// pusher sends each new version of a file, with the overrides over it,
// to the streams whose flags it changes, and to OFREP's provider. The file
// source calls it from one goroutine, so it needs no lock of its own.
type pusher struct {
	lay      *layering
	i        int           // the file's index in lay
	follower *flagFollower // nil without --http
	path     string
	out      io.Writer
}

func (p *pusher) Update(u source.Update) error {
	// The first read is what the server already serves, unless the file
	// changed while serve was starting.
	if bytes.Equal(u.Flags, p.lay.fileDoc(p.i)) {
		return nil
	}
	set, err := evaluator.Load(u.Flags)
	if err == nil {
		err = p.lay.setFile(p.i, u.Flags, set)
	}
	if err != nil {
		fmt.Fprintf(p.out, "%s: not sent: %v\n", p.path, err)
		return err
	}
	p.follower.refresh()
	return nil
}

func (p *pusher) Lost(err error) {
	fmt.Fprintf(p.out, "%s: %v; the streams keep the last flags\n", p.path, err)
}

func (p *pusher) Fatal(err error) {
	fmt.Fprintf(p.out, "%s: %v\n", p.path, err)
}

// lockedWriter serialises the lines of the watchers of several files.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
