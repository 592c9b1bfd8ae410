package fractional

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/twmb/murmur3"
)

// AppendString and AppendDefault give the bytes HashString and HashDefault
// hash, which is what an explanation of a hash shows.
func TestAppendHashedBytes(t *testing.T) {
	long := strings.Repeat("k", 300)
	tests := []struct {
		name string
		v    Version
		s    string // AppendString's input, or with key AppendDefault's targeting key
		key  string // the flag key; "" for AppendString
		want string // hex, or the prefix of it for long inputs
	}{
		{"v1 string as is", V1, "user-1", "", "757365722d31"},
		{"v2 string as is", V2, "user-1", "", "757365722d31"},
		{"v2 invalid UTF-8 as is", V2, "a\xff", "", "61ff"},
		{"v3 text string", V3, "user-1", "", "66" + "757365722d31"},
		{"v3 empty text string", V3, "", "", "60"},
		{"v3 two-byte length", V3, long, "", "79012c6b6b"},
		{"v2 concatenated", V2, "user", "flag", "666c6167" + "75736572"},
		{"v1 concatenated", V1, "user", "flag", "666c6167" + "75736572"},
		{"v3 array of two", V3, "user", "flag", "82" + "64666c6167" + "6475736572"},
		{"v3 long key", V3, long, "flag", "82" + "64666c6167" + "79012c6b"},
	}
	for _, tc := range tests {
		var got []byte
		var h uint32
		if tc.key == "" {
			got, h = AppendString([]byte{0xee}, tc.v, tc.s), HashString(tc.v, tc.s)
		} else {
			got, h = AppendDefault([]byte{0xee}, tc.v, tc.key, tc.s), HashDefault(tc.v, tc.key, tc.s)
		}
		if got[0] != 0xee {
			t.Errorf("%s: the buffer's contents were not kept", tc.name)
		}
		got = got[1:]
		if enc := hex.EncodeToString(got); !strings.HasPrefix(enc, tc.want) || (len(tc.s) < 300 && enc != tc.want) {
			t.Errorf("%s: bytes %s, want %s", tc.name, enc, tc.want)
		}
		if murmur3.Sum32(got) != h {
			t.Errorf("%s: the hash of the bytes is %#x, the hash function's %#x", tc.name, murmur3.Sum32(got), h)
		}
	}
}
