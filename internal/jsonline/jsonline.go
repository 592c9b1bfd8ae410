// Package jsonline writes a value as one line of JSON, the form in which
// explanations, the command's output and the debug page show values and
// metadata.
package jsonline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// String is v as one line of JSON, map keys sorted and <, > and & left as
// they are (whoever shows it in HTML escapes it), or fmt's form of v when
// it has none in JSON (NaN, infinities).
func String(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
