package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// flagsPath is the one path serve's HTTP side answers.
const flagsPath = "/flags.json"

// maxKeptSelectors bounds the selectors whose answers are kept until the
// flags change: a poller may send any selector, and each answer kept holds
// its document twice. A selector past the bound is answered all the same,
// from a document made for its request alone.
const maxKeptSelectors = 1000

// Limits of the HTTP server. A poller sends a small request and reads one
// document; the limits keep a slow or oversized client from holding a
// connection or memory for long.
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpIdleTimeout       = 2 * time.Minute
	httpMaxHeaderBytes    = 16 << 10
	httpShutdownWait      = 5 * time.Second
)

// httpWriteTimeout bounds the writing of an answer. OFREP's event streams
// lift it for themselves, as they last as long as their client. It is a
// variable so that a test can show that without waiting a minute.
var httpWriteTimeout = time.Minute

// flagDocuments is what the HTTP side serves: a sync server, whose
// Document is the flag document a stream with a selector is sent, so that
// both protocols select alike.
type flagDocuments interface {
	Document(selector string) (doc string, version uint64, err error)
	Version() uint64
}

// representation is one selector's document as served, in each encoding,
// with the strong ETag of each: made once per version of the flags, so that
// a poll costs a map lookup and a write.
type representation struct {
	identity, gzipped []byte
	etag, gzipETag    string
}

func newRepresentation(doc string) *representation {
	sum := sha256.Sum256([]byte(doc))
	tag := hex.EncodeToString(sum[:16])
	// Strong ETags are per representation: the gzipped bytes get their own.
	return &representation{
		identity: []byte(doc),
		gzipped:  gzipBytes([]byte(doc)),
		etag:     `"` + tag + `"`,
		gzipETag: `"` + tag + `-gz"`,
	}
}

// gzipBytes compresses b as well as gzip can: it is done once per version
// of the flags, for every poll that follows. Writing to memory at a valid
// level cannot fail.
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// flagsHandler answers GET and HEAD /flags.json[?selector=S] with the flag
// document a sync stream with selector S is sent.
type flagsHandler struct {
	docs    flagDocuments
	log     *slog.Logger
	maxKept int

	mu      sync.Mutex
	version uint64                     // the version of the flags every kept answer is of
	kept    map[string]*representation // by selector
	full    bool                       // kept reached maxKept at this version, which was logged
}

func newFlagsHandler(docs flagDocuments, log *slog.Logger) *flagsHandler {
	return &flagsHandler{docs: docs, log: log, maxKept: maxKeptSelectors, kept: make(map[string]*representation)}
}

func (h *flagsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != flagsPath {
		http.Error(w, "not found: the flags are at "+flagsPath, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: use GET or HEAD", http.StatusMethodNotAllowed)
		return
	}
	selector, err := selectorParam(r.URL.RawQuery)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rep, err := h.representation(selector)
	if err != nil {
		h.refuse(w, r, selector, err)
		return
	}
	writeRepresentation(w, r, rep)
}

// selectorParam is the query's selector, "" for none, as a stream without
// a selector header has. Two selectors are refused: a stream has one.
func selectorParam(rawQuery string) (string, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", fmt.Errorf("bad query: %v", err)
	}
	switch sel := q["selector"]; len(sel) {
	case 0:
		return "", nil
	case 1:
		return sel[0], nil
	default:
		return "", fmt.Errorf("bad query: %d selectors, give one", len(sel))
	}
}

// representation is what selector gets now, kept until the flags change.
// It is made under the lock, so that the polls that follow a change wait
// for one document and one compression instead of each making their own.
func (h *flagsHandler) representation(selector string) (*representation, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetBefore(h.docs.Version())
	if rep, ok := h.kept[selector]; ok {
		return rep, nil
	}
	doc, version, err := h.docs.Document(selector)
	if err != nil {
		return nil, err
	}
	h.forgetBefore(version)
	rep := newRepresentation(doc)
	h.keep(selector, rep)
	return rep, nil
}

// forgetBefore drops the answers of an older version of the flags: after a
// change, only the selectors asked for again are made again. h.mu must be
// held.
func (h *flagsHandler) forgetBefore(version uint64) {
	if version != h.version {
		h.version, h.full = version, false
		clear(h.kept)
	}
}

// keep keeps rep for selector while fewer than maxKept are kept, logging
// each selector kept, which tells the operator what the fleet asks for.
// h.mu must be held.
func (h *flagsHandler) keep(selector string, rep *representation) {
	if len(h.kept) < h.maxKept {
		h.kept[selector] = rep
		h.log.Info("flags ready over HTTP", "selector", selector, "bytes", len(rep.identity),
			"gzipBytes", len(rep.gzipped), "etag", strings.Trim(rep.etag, `"`))
		return
	}
	if !h.full {
		h.full = true
		h.log.Warn("HTTP: more selectors asked for than are kept; the others are made for each request until the flags change",
			"kept", h.maxKept)
	}
}

// refuse answers a selector the sync server refuses: one flagd could not
// read (or, without sources, one with no flag set) is not found here;
// anything else is the server's failure.
func (h *flagsHandler) refuse(w http.ResponseWriter, r *http.Request, selector string, err error) {
	st := status.Convert(err)
	code := http.StatusServiceUnavailable
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound:
		code = http.StatusNotFound
	}
	h.log.LogAttrs(r.Context(), slog.LevelDebug, "HTTP request refused",
		slog.String("selector", selector), slog.Int("status", code), slog.String("error", st.Message()))
	http.Error(w, st.Message(), code)
}

// writeRepresentation answers with the encoding the request accepts, or
// with 304 Not Modified when the request names what it holds.
func writeRepresentation(w http.ResponseWriter, r *http.Request, rep *representation) {
	gz := acceptsGzip(r.Header.Values("Accept-Encoding"))
	body, etag, other := rep.identity, rep.etag, rep.gzipETag
	if gz {
		body, etag, other = rep.gzipped, rep.gzipETag, rep.etag
	}
	h := w.Header()
	// no-cache: a cache may keep the answer but must ask again, with the
	// ETag, before each use, so that a change is seen at the next poll.
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if tag, ok := currentTag(r.Header.Values("If-None-Match"), etag, other); ok {
		h.Set("ETag", tag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("ETag", etag)
	h.Set("Content-Type", "application/json")
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// currentTag is the ETag to answer 304 with when If-None-Match names a
// current one, compared weakly as RFC 9110 says for If-None-Match: the tag
// of the representation selected ("*" names it too), or else that of the
// other encoding of the same document, which the client holds and which is
// as current. Without If-None-Match, nothing matches.
func currentTag(header []string, selected, other string) (string, bool) {
	tags := entityTags(strings.Join(header, ","))
	for _, want := range []string{selected, other} {
		for _, t := range tags {
			if t == want || (t == "*" && want == selected) {
				return want, true
			}
		}
	}
	return "", false
}

// entityTags reads an If-None-Match value: "*", or entity tags separated
// by commas. Weak tags lose their W/, since If-None-Match compares weakly.
// Reading stops at anything else, keeping the tags read so far.
func entityTags(s string) []string {
	var tags []string
	for {
		s = strings.TrimLeft(s, " \t,")
		switch {
		case s == "":
			return tags
		case s[0] == '*':
			tags = append(tags, "*")
			s = s[1:]
			continue
		}
		s = strings.TrimPrefix(s, "W/")
		if s == "" || s[0] != '"' {
			return tags
		}
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return tags
		}
		tags = append(tags, s[:end+2])
		s = s[end+2:]
	}
}

// acceptsGzip tells whether Accept-Encoding allows gzip: gzip (or x-gzip)
// named with a weight above 0, or else "*" with one. A weight that does
// not parse counts as 0, since the identity encoding is always safe.
func acceptsGzip(header []string) bool {
	named, star := -1.0, -1.0
	for _, v := range header {
		for part := range strings.SplitSeq(v, ",") {
			coding, q := codingWeight(part)
			switch coding {
			case "gzip", "x-gzip":
				named = max(named, q)
			case "*":
				star = q
			}
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// codingWeight reads one element of Accept-Encoding: a coding, in lower
// case, and its weight, 1 unless q= says otherwise.
func codingWeight(s string) (string, float64) {
	coding, params, _ := strings.Cut(s, ";")
	q := 1.0
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			f = 0
		}
		q = f
	}
	return strings.ToLower(strings.TrimSpace(coding)), q
}

// httpServer is serve's HTTP side, on a listener of its own.
type httpServer struct {
	srv    *http.Server
	addr   string
	done   chan struct{}               // closed when Serve has returned
	onStop []func(ctx context.Context) // run as shutdown starts
}

// listenHTTP listens on addr, so that an address in use is reported as
// bad input before anything is served or started.
func listenHTTP(addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http: %v", err)
	}
	return lis, nil
}

// serveHTTP serves h on lis. onStop is run when shutdown starts, with its
// deadline: it ends what would keep a request open, which the server
// cannot end itself.
func serveHTTP(lis net.Listener, h http.Handler, log *slog.Logger, onStop ...func(ctx context.Context)) *httpServer {
	s := &httpServer{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: httpReadHeaderTimeout,
			WriteTimeout:      httpWriteTimeout,
			IdleTimeout:       httpIdleTimeout,
			MaxHeaderBytes:    httpMaxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		addr:   lis.Addr().String(),
		done:   make(chan struct{}),
		onStop: onStop,
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP server failed", "error", err)
		}
	}()
	return s
}

// shutdown lets the requests in progress finish, for a few seconds at
// most, closes what is left and waits until the server has stopped. The
// onStop functions run meanwhile: Shutdown waits for every request, and an
// event stream ends only when told to.
func (s *httpServer) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, stop := range s.onStop {
		wg.Go(func() { stop(ctx) })
	}
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	wg.Wait()
	<-s.done
}
