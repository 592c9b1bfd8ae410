package fractional

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version selects a bucketing algorithm. The zero value is not a valid
// version, so an unset configuration field is detectable.
type Version uint8

// The supported bucketing algorithms; see the package documentation for how
// they differ.
const (
	V1 Version = 1 // legacy float64 percentage bucketing
	V2 Version = 2 // integer bucketing; what deployed flagd uses
	V3 Version = 3 // integer bucketing over typed values hashed as CBOR
)

// ErrUnknownVersion is returned when text does not name a supported version.
var ErrUnknownVersion = errors.New("fractional: unknown version")

// ParseVersion parses "v1", "v2" or "v3", ignoring case and surrounding
// white space.
func ParseVersion(s string) (Version, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "v1":
		return V1, nil
	case "v2":
		return V2, nil
	case "v3":
		return V3, nil
	}
	return 0, fmt.Errorf("%w %q: accepted values are v1, v2 and v3", ErrUnknownVersion, s)
}

// String returns "v1", "v2" or "v3", or "Version(N)" for an unsupported
// value so that misconfiguration stays visible in logs.
func (v Version) String() string {
	if v.Valid() {
		return "v" + strconv.Itoa(int(v))
	}
	return "Version(" + strconv.Itoa(int(v)) + ")"
}

// Valid reports whether v is one of V1, V2 or V3.
func (v Version) Valid() bool {
	return v >= V1 && v <= V3
}

// MarshalText implements encoding.TextMarshaler. An unsupported version is
// an error rather than text that could not be read back.
func (v Version) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrUnknownVersion, uint8(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with the syntax accepted
// by ParseVersion. On error v is left unchanged.
func (v *Version) UnmarshalText(b []byte) error {
	p, err := ParseVersion(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}
