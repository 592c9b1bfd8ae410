package blob

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	gcblob "gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/flagsnap/flagsnap/source"
)

// memFetcher is a fetcher of key in a bucket in memory.
func memFetcher(t *testing.T, maxSize int64) (*fetcher, *gcblob.Bucket) {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	return &fetcher{bucket: b, key: "flags.json", origin: "s3://b/flags.json", timeout: time.Second, maxSize: maxSize}, b
}

func write(t *testing.T, b *gcblob.Bucket, doc string) {
	t.Helper()
	if err := b.WriteAll(context.Background(), "flags.json", []byte(doc), nil); err != nil {
		t.Fatal(err)
	}
}

func TestFetchDownloadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	f, b := memFetcher(t, 1<<20)
	write(t, b, "one")
	doc, v, err := f.Fetch(ctx, source.Version{})
	if err != nil || string(doc) != "one" || v.ETag == "" {
		t.Fatalf("first fetch: %q %+v %v, want one with its ETag", doc, v, err)
	}
	if _, again, err := f.Fetch(ctx, v); !errors.Is(err, source.ErrNotModified) || again != v {
		t.Fatalf("unchanged: %+v %v, want ErrNotModified and the same version", again, err)
	}
	// The zero Version asks for the document whatever it is: after a
	// failure, the poller must deliver it to end the loss.
	if doc, _, err := f.Fetch(ctx, source.Version{}); err != nil || string(doc) != "one" {
		t.Fatalf("unconditional fetch: %q %v", doc, err)
	}
	write(t, b, "two")
	doc, v2, err := f.Fetch(ctx, v)
	if err != nil || string(doc) != "two" || v2 == v {
		t.Fatalf("after a write: %q %+v %v, want two with a new version", doc, v2, err)
	}
}

func TestVersionOf(t *testing.T) {
	mod := time.Date(2026, 11, 26, 12, 0, 0, 5, time.FixedZone("x", 3600))
	tests := []struct {
		name string
		a    gcblob.Attributes
		want source.Version
	}{
		{"etag", gcblob.Attributes{ETag: `"abc"`, ModTime: mod}, source.Version{ETag: `"abc"`}},
		{"weak etag", gcblob.Attributes{ETag: `W/"abc"`}, source.Version{ETag: `W/"abc"`}},
		{"quoted nothing", gcblob.Attributes{ETag: `""`, ModTime: mod}, source.Version{Modified: "2026-11-26T11:00:00.000000005Z"}},
		{"weak nothing", gcblob.Attributes{ETag: `W/""`, ModTime: mod}, source.Version{Modified: "2026-11-26T11:00:00.000000005Z"}},
		{"modification time", gcblob.Attributes{ModTime: mod}, source.Version{Modified: "2026-11-26T11:00:00.000000005Z"}},
		{"nothing", gcblob.Attributes{}, source.Version{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(&tt.a); got != tt.want {
				t.Errorf("versionOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFetchRefusesAnObjectOverTheLimit(t *testing.T) {
	f, b := memFetcher(t, 4)
	write(t, b, "12345")
	_, _, err := f.Fetch(context.Background(), source.Version{})
	var tl *source.MessageTooLargeError
	if !errors.As(err, &tl) || tl.Size != 5 || tl.Limit != 4 || tl.Target != "s3://b/flags.json" {
		t.Fatalf("Fetch: %v, want a MessageTooLargeError of 5 bytes over 4 from the object", err)
	}
	write(t, b, "1234")
	if doc, _, err := f.Fetch(context.Background(), source.Version{}); err != nil || string(doc) != "1234" {
		t.Fatalf("at the limit: %q %v", doc, err)
	}
}

func TestFetchOfAMissingObject(t *testing.T) {
	f, _ := memFetcher(t, 1<<20)
	_, _, err := f.Fetch(context.Background(), source.Version{})
	var oe *ObjectError
	if !errors.As(err, &oe) || oe.Code != gcerrors.NotFound || err.Error() != "blob: no object at s3://b/flags.json: check the bucket and key" {
		t.Fatalf("Fetch: %v, want NotFound with what to check", err)
	}
}

// statusError is an error carrying an HTTP status, as the AWS SDK's do.
type statusError int

func (e statusError) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e statusError) HTTPStatusCode() int { return int(e) }

func TestFetchErrorsAreClassified(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want gcerrors.ErrorCode
	}{
		{"forbidden", context.Background(), fmt.Errorf("head: %w", statusError(http.StatusForbidden)), gcerrors.PermissionDenied},
		{"unauthorized", context.Background(), statusError(http.StatusUnauthorized), gcerrors.PermissionDenied},
		{"server error", context.Background(), statusError(http.StatusInternalServerError), gcerrors.Unknown},
		{"forbidden on Azure", context.Background(), &azcore.ResponseError{StatusCode: http.StatusForbidden, ErrorCode: "AuthorizationPermissionMismatch"}, gcerrors.PermissionDenied},
		{"unauthorized on GCS", context.Background(), &googleapi.Error{Code: http.StatusUnauthorized}, gcerrors.PermissionDenied},
		{"timed out", expired, context.DeadlineExceeded, gcerrors.DeadlineExceeded},
	}
	f, _ := memFetcher(t, 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oe *ObjectError
			if err := f.error(tt.ctx, tt.err); !errors.As(err, &oe) || oe.Code != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("%v: code %v, want %v wrapping the cause", err, oe.Code, tt.want)
			}
		})
	}
}

func TestObjectErrorSaysWhatToChange(t *testing.T) {
	cause := errors.New("the store's own words")
	tests := []struct {
		name string
		e    ObjectError
		want string
	}{
		{"not found", ObjectError{URL: "s3://b/k", Code: gcerrors.NotFound, Err: cause},
			"blob: no object at s3://b/k: check the bucket and key"},
		{"not found on GCS", ObjectError{URL: "gs://b/k", Code: gcerrors.NotFound, Err: cause},
			"blob: no object at gs://b/k: check the bucket and key, and that the credentials of the environment (GOOGLE_APPLICATION_CREDENTIALS, or the service account of the workload) may read it"},
		{"refused on S3", ObjectError{URL: "s3://b/k", Code: gcerrors.PermissionDenied, Err: cause},
			"blob: s3://b/k refused access: check the credentials of the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or the role of the instance or task) and that they may read the object"},
		{"refused on Azure", ObjectError{URL: "azblob://c/k", Code: gcerrors.PermissionDenied, Err: cause},
			"blob: azblob://c/k refused access: check the credentials of the environment (AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_CONNECTION_STRING, or Azure's default credential) and that they may read the object"},
		{"no answer", ObjectError{URL: "s3://b/k", Code: gcerrors.DeadlineExceeded, Timeout: 10 * time.Second, Err: cause},
			"blob: no answer from s3://b/k within 10s: check the endpoint and the network, or raise the bound with blob.WithTimeout"},
		{"anything else", ObjectError{URL: "s3://b/k", Code: gcerrors.Internal, Err: cause},
			"blob: reading s3://b/k: the store's own words"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !errors.Is(&tt.e, cause) {
				t.Error("the cause is not reachable with errors.Is")
			}
		})
	}
}
