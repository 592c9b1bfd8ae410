package blob

import (
	"context"
	"errors"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	gcblob "gocloud.dev/blob"

	"github.com/flagsnap/flagsnap/internal/httporigin"
	"github.com/flagsnap/flagsnap/source"
)

// The bound of WithMaxSize bounds the source's memory too: an object
// whose attributes pass it but whose content does not is refused having
// read about the bound. GCS stores an object uploaded with
// Content-Encoding gzip as it was sent, reports that size in its
// attributes, and serves it gzipped to a client that accepts gzip, which
// Go's transport decodes: a few KB in the attributes can be many MB in
// the download.

const (
	// testBound is large enough that the fixed costs of a download are
	// small beside it.
	testBound = 1 << 20
	// oversize is what the object decodes to, 16 times the bound.
	oversize = 16 * testBound
	// boundKey is the object of these tests.
	boundKey  = "flags.json"
	boundGood = `{"flags":{"kept":{"state":"ENABLED","variants":{"on":true},"defaultVariant":"on"}}}`
)

// gcsEmulator runs fake-gcs-server on loopback with one bucket, and
// opens that bucket through gocloud.dev as Open would, with
// STORAGE_EMULATOR_HOST, which gcsblob reads at every OpenBucket.
func gcsEmulator(t *testing.T) (*fakestorage.Server, *gcblob.Bucket) {
	t.Helper()
	const bucket = "flags"
	srv := httptest.NewUnstartedServer(nil)
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: srv.Listener.Addr().String(), NoListener: true})
	if err != nil {
		srv.Close()
		t.Skipf("fake-gcs-server does not start here (%v): the test needs it", err)
	}
	t.Cleanup(fake.Stop)
	fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	srv.Config.Handler = fake.HTTPHandler()
	srv.Start()
	t.Cleanup(srv.Close)
	t.Setenv("STORAGE_EMULATOR_HOST", srv.Listener.Addr().String())
	t.Setenv("STORAGE_EMULATOR_HOST_GRPC", "")
	b, err := gcblob.OpenBucket(context.Background(), "gs://"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return fake, b
}

func putObject(fake *fakestorage.Server, content []byte, encoding string) {
	fake.CreateObject(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "flags", Name: boundKey, ContentType: "application/json", ContentEncoding: encoding},
		Content:     content,
	})
}

// measuredFetcher is a source.Fetcher that records, for each fetch, its
// error and the change of TotalAlloc over it. TotalAlloc only grows, so
// the change counts every byte allocated meanwhile, even what was
// collected before the fetch returned: it bounds the fetch's peak from
// above. The emulator's own allocations for the requests are counted
// too, which only makes the bound harder to meet.
type measuredFetcher struct {
	source.Fetcher
	mu        sync.Mutex
	allocated []uint64 // of the fetches refused for their size
}

func (m *measuredFetcher) Fetch(ctx context.Context, since source.Version) ([]byte, source.Version, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc, v, err := m.Fetcher.Fetch(ctx, since)
	runtime.ReadMemStats(&after)
	var tl *source.MessageTooLargeError
	if errors.As(err, &tl) {
		m.mu.Lock()
		m.allocated = append(m.allocated, after.TotalAlloc-before.TotalAlloc)
		m.mu.Unlock()
	}
	return doc, v, err
}

func (m *measuredFetcher) refusals() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]uint64(nil), m.allocated...)
}

// boundSink records what a Poll delivers and reports.
type boundSink struct {
	mu      sync.Mutex
	updates []string
	lost    []error
}

func (s *boundSink) Update(u source.Update) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = append(s.updates, string(u.Flags))
	return nil
}

func (s *boundSink) Lost(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = append(s.lost, err)
}

func (s *boundSink) Fatal(err error) { s.Lost(err) }

func (s *boundSink) snapshot() ([]string, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.updates...), append([]error(nil), s.lost...)
}

// waitUntil polls cond until it holds, for at most 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestGzipEncodedObjectOverTheBoundIsRefusedHavingReadOnlyTheBound(t *testing.T) {
	fake, bucket := gcsEmulator(t)
	putObject(fake, []byte(boundGood), "")
	f := &fetcher{bucket: bucket, key: boundKey, origin: "gs://flags/" + boundKey, timeout: 10 * time.Second, maxSize: testBound}
	m := &measuredFetcher{Fetcher: f}
	poll, err := source.NewPoll(source.PollConfig{Fetcher: m, Origin: f.origin, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sink := &boundSink{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- poll.Run(ctx, sink) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	waitUntil(t, "the first document", func() bool { u, _ := sink.snapshot(); return len(u) == 1 })
	bomb := httporigin.GzipBomb(oversize)
	putObject(fake, bomb, "gzip")
	// A retry is refused too; neither delivers.
	waitUntil(t, "two refusals", func() bool { return len(m.refusals()) >= 2 })

	updates, lost := sink.snapshot()
	if len(updates) != 1 || updates[0] != boundGood {
		t.Fatalf("updates %q, want only the document before the one over the bound", updates)
	}
	var tl *source.MessageTooLargeError
	if len(lost) != 1 || !errors.As(lost[0], &tl) || tl.Limit != testBound || tl.Setting != "blob.WithMaxSize" || tl.Target != f.origin {
		t.Fatalf("lost %v, want one *MessageTooLargeError over %d naming blob.WithMaxSize", lost, testBound)
	}
	if int64(len(bomb)) > testBound {
		t.Fatalf("the object's stored size, %d, is over the bound: the attributes would refuse it unread", len(bomb))
	}

	// As in the source package's test of HTTP: at least bound+1 bytes
	// were read, or the measure missed the read; under 1.5 times the
	// bound, since a buffer that doubles as it fills allocates twice its
	// final size, which is at least bound+1, while one download costs
	// only tens of KiB beside what it reads.
	allocated := m.refusals()[0]
	t.Logf("the refused fetch allocated %d bytes (%.2f times the bound)", allocated, float64(allocated)/testBound)
	switch {
	case allocated < testBound+1:
		t.Errorf("the refused fetch allocated %d bytes, under the bound+1 it must have read: the measure missed the read", allocated)
	case allocated >= testBound*3/2:
		t.Errorf("the refused fetch allocated %d bytes, %.2f times the bound of %d: want under 1.5", allocated, float64(allocated)/testBound, testBound)
	}
}
