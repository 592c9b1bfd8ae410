package flagsnap

// gRPC status codes under the names FLAGD_FATAL_STATUS_CODES uses.

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
)

// statusCodeNames are the gRPC status codes under their canonical names.
var statusCodeNames = map[codes.Code]string{
	codes.Canceled:           "CANCELLED",
	codes.Unknown:            "UNKNOWN",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
	codes.NotFound:           "NOT_FOUND",
	codes.AlreadyExists:      "ALREADY_EXISTS",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Aborted:            "ABORTED",
	codes.OutOfRange:         "OUT_OF_RANGE",
	codes.Unimplemented:      "UNIMPLEMENTED",
	codes.Internal:           "INTERNAL",
	codes.Unavailable:        "UNAVAILABLE",
	codes.DataLoss:           "DATA_LOSS",
	codes.Unauthenticated:    "UNAUTHENTICATED",
}

// parseStatusCodes reads status code names, in any case.
func parseStatusCodes(names []string) ([]codes.Code, error) {
	out := make([]codes.Code, 0, len(names))
	for _, name := range names {
		want := strings.ToUpper(strings.TrimSpace(name))
		found := false
		for code, n := range statusCodeNames {
			if n == want || (want == "CANCELED" && code == codes.Canceled) {
				out = append(out, code)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%q is not a gRPC status code name (such as PERMISSION_DENIED)", name)
		}
	}
	return out, nil
}
