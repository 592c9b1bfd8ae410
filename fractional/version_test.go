package fractional

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"v1", V1, false},
		{"v2", V2, false},
		{"v3", V3, false},
		{"V2", V2, false},
		{"  v3\t\n", V3, false},
		{"", 0, true},
		{"v4", 0, true},
		{"v0", 0, true},
		{"2", 0, true},
		{"v 2", 0, true},
		{"version2", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseVersion(tc.in)
		if tc.wantErr {
			if !errors.Is(err, ErrUnknownVersion) {
				t.Errorf("ParseVersion(%q) err = %v, want ErrUnknownVersion", tc.in, err)
				continue
			}
			msg := err.Error()
			for _, part := range []string{tc.in, "v1", "v2", "v3"} {
				if !strings.Contains(msg, part) {
					t.Errorf("ParseVersion(%q) error %q does not mention %q", tc.in, msg, part)
				}
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestVersionString(t *testing.T) {
	tests := []struct {
		v     Version
		s     string
		valid bool
	}{
		{V1, "v1", true},
		{V2, "v2", true},
		{V3, "v3", true},
		{0, "Version(0)", false},
		{4, "Version(4)", false},
		{255, "Version(255)", false},
	}
	for _, tc := range tests {
		if got := tc.v.String(); got != tc.s {
			t.Errorf("Version(%d).String() = %q, want %q", uint8(tc.v), got, tc.s)
		}
		if got := tc.v.Valid(); got != tc.valid {
			t.Errorf("Version(%d).Valid() = %v, want %v", uint8(tc.v), got, tc.valid)
		}
	}
}

func TestVersionText(t *testing.T) {
	for _, v := range []Version{V1, V2, V3} {
		b, err := v.MarshalText()
		if err != nil {
			t.Fatalf("%s: MarshalText: %v", v, err)
		}
		var back Version
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("round trip of %s = %v, %v", v, back, err)
		}
	}
	if _, err := Version(9).MarshalText(); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("MarshalText(9) err = %v, want ErrUnknownVersion", err)
	}
	v := V2
	if err := v.UnmarshalText([]byte("v7")); !errors.Is(err, ErrUnknownVersion) || v != V2 {
		t.Errorf("UnmarshalText(v7) = %v, version now %v; want error and V2 kept", err, v)
	}

	// Through encoding/json, as a configuration file would use it.
	var cfg struct {
		Version Version `json:"version"`
	}
	if err := json.Unmarshal([]byte(`{"version":" V3 "}`), &cfg); err != nil || cfg.Version != V3 {
		t.Fatalf("json decode = %v, %v", cfg.Version, err)
	}
	out, err := json.Marshal(cfg)
	if err != nil || string(out) != `{"version":"v3"}` {
		t.Errorf("json encode = %s, %v", out, err)
	}
}
