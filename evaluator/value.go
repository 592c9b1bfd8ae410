package evaluator

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a value as the targeting language sees it.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNum
	kStr
	kArr
	kObj
	// kRoot is the evaluation data itself: $flagd, enrichment and the caller's
	// context seen as one object without ever being merged into one map.
	kRoot
	// kFlagd is the virtual {"flagKey": …, "timestamp": …} object.
	kFlagd
	// kReduce is the {"current", "accumulator", "valueType"} object the
	// reference engine builds for each step of reduce.
	kReduce
)

// value is one JSON value during evaluation, a plain struct so that numbers
// and booleans are never boxed. Containers keep the Go value they came from
// and are read through arrLen/arrAt/objGet. Four fields are the most the
// compiler keeps in registers, hence goInt marked by ref.
type value struct {
	k kind
	b bool
	n float64
	// ref is the string of a kStr (usually the very interface value the
	// caller's context holds, so reading it costs nothing), the container of
	// a kArr or kObj, or the state of a kReduce. Keeping strings here rather
	// than in a field of their own makes value 32 bytes instead of 48, which
	// is most of the cost of passing values around.
	//
	// A kNum read from a caller's context keeps the caller's Go value here
	// (again the interface value itself, so at no cost), and a kStr that
	// stands for a Go value other than a string keeps a *goText: typed
	// hashing must see the caller's value exactly, where the rest of the
	// language sees the float64 or the JSON text.
	ref any
}

// goText is the JSON text of a caller's Go value that is not a string (a
// time, a named type, a type that marshals itself), with the value.
type goText struct {
	s string
	x any
}

// str is the string of a kStr value.
func (v value) str() string {
	switch t := v.ref.(type) {
	case string:
		return t
	case *goText:
		return t.s
	}
	return ""
}

var (
	null     = value{}
	trueVal  = value{k: kBool, b: true}
	falseVal = value{k: kBool}
)

func boolVal(b bool) value          { return value{k: kBool, b: b} }
func numVal(n float64) value        { return value{k: kNum, n: n} }
func strVal(s string) value         { return value{k: kStr, ref: s} }
func arrVal(a []value) value        { return value{k: kArr, ref: a} }
func objVal(m map[string]any) value { return value{k: kObj, ref: m} }

// fromAny converts a Go value from a caller's context, an enrichment map or a
// flag document into a value, seeing it exactly as flagd's engine does after
// its JSON round trip of the context. Scalars and the common container types
// are read in place; anything else is normalised through encoding/json once,
// when the rule reads it. Numbers keep x itself too, for typed hashing.
func fromAny(x any) value {
	// Context attributes are mostly strings; checking for them first is
	// cheaper than the full type switch. Keeping x itself, rather than the
	// string in it, avoids boxing it again.
	if s, ok := x.(string); ok {
		if validText(s) {
			return value{k: kStr, ref: x}
		}
		return strVal(validUTF8(s))
	}
	// Containers are kept as the interface value x too: converting a slice
	// to an interface again would allocate. A nil slice or map is null, as
	// encoding/json makes it.
	switch t := x.(type) {
	case nil:
		return null
	case bool:
		return value{k: kBool, b: t}
	case float64:
		return value{k: kNum, n: t, ref: x}
	case int:
		return value{k: kNum, n: float64(t), ref: x}
	case int64:
		return value{k: kNum, n: float64(t), ref: x}
	case int32:
		return value{k: kNum, n: float64(t), ref: x}
	case int16:
		return value{k: kNum, n: float64(t), ref: x}
	case int8:
		return value{k: kNum, n: float64(t), ref: x}
	case uint:
		return value{k: kNum, n: float64(t), ref: x}
	case uint64:
		return value{k: kNum, n: float64(t), ref: x}
	case uint32:
		return value{k: kNum, n: float64(t), ref: x}
	case uint16:
		return value{k: kNum, n: float64(t), ref: x}
	case uint8:
		return value{k: kNum, n: float64(t), ref: x}
	case float32:
		return value{k: kNum, n: float32AsJSON(t), ref: x}
	case json.Number:
		f, _ := strconv.ParseFloat(string(t), 64)
		return value{k: kNum, n: f, ref: x}
	case []any:
		return container(kArr, x, t == nil)
	case map[string]any:
		return container(kObj, x, t == nil)
	case []string:
		return container(kArr, x, t == nil)
	case []float64:
		return container(kArr, x, t == nil)
	case []int:
		return container(kArr, x, t == nil)
	case []int64:
		return container(kArr, x, t == nil)
	case []bool:
		return container(kArr, x, t == nil)
	case map[string]string:
		return container(kObj, x, t == nil)
	case []value:
		return container(kArr, x, t == nil)
	case engineInt:
		return value{k: kNum, n: float64(t), ref: t}
	}
	return fromGo(x)
}

// fromGo reads any other Go value through its JSON form. A number or a
// string keeps x for typed hashing, which takes a named type by its kind and
// a time as a time; containers need not, as their JSON form keeps their
// elements (see normalizeSlow).
func fromGo(x any) value {
	v := fromAny(normalizeSlow(x))
	switch v.k {
	case kNum:
		v.ref = x
	case kStr:
		v.ref = &goText{s: v.str(), x: x}
	}
	return v
}

// intVal is an integer from a caller's typed slice. One that float64
// cannot hold exactly keeps its value for typed hashing; only those are
// boxed, which allocates.
func intVal(i int64) value {
	f := float64(i)
	if f >= 0x1p63 || int64(f) != i {
		return value{k: kNum, n: f, ref: i}
	}
	return value{k: kNum, n: f}
}

// engineInt is a goInt number once toAny has put it into a container (the
// object set builds), so that reading it back keeps it apart from a float,
// as the reference engine's Go int stays. An int from a caller's context is
// a JSON number like any other and cannot be mistaken for it.
type engineInt int

// goInt reports whether v is the reference engine's integer zero, which
// compares differently from the number 0 in "===" and "in".
func (v value) goInt() bool {
	_, ok := v.ref.(engineInt)
	return ok && v.k == kNum
}

func container(k kind, x any, isNil bool) value {
	if isNil {
		return null
	}
	return value{k: k, ref: x}
}

// textVal is a string from a caller's Go value, as JSON would carry it.
func textVal(s string) value { return strVal(jsonText(s)) }

// jsonText is s as JSON would carry it: invalid UTF-8 becomes U+FFFD.
func jsonText(s string) string {
	if validText(s) {
		return s
	}
	return validUTF8(s)
}

// validText is utf8.ValidString with a quick path for ASCII, which context
// strings almost always are.
func validText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

// validUTF8 replaces every invalid byte with U+FFFD, one for one, as
// encoding/json does when flagd encodes a context (strings.ToValidUTF8
// would replace a run of bad bytes with a single one).
func validUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// float32AsJSON is the float64 that encoding/json produces for a float32: it
// prints the shortest decimal for 32 bits, which then parses as float64.
func float32AsJSON(f float32) float64 {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return float64(f)
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], float64(f), 'g', -1, 32)
	out, _ := strconv.ParseFloat(string(b), 64)
	return out
}

// normalizeSlow turns any other Go value (structs, pointers, time.Time,
// named types…) into the plain JSON form flagd's engine would have seen,
// null when encoding/json cannot encode it; numbers stay json.Number, for
// typed hashing.
func normalizeSlow(x any) any {
	switch x.(type) {
	case json.Marshaler, encoding.TextMarshaler:
		// The type decides its own JSON form.
		return viaJSON(x)
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil
		}
		if rv.Type().Elem().Kind() != reflect.Uint8 {
			out := make([]any, rv.Len())
			for i := range out {
				out[i] = rv.Index(i).Interface()
			}
			return out
		}
	case reflect.Map:
		if rv.IsNil() {
			return nil
		}
		if rv.Type().Key().Kind() == reflect.String {
			out := make(map[string]any, rv.Len())
			it := rv.MapRange()
			for it.Next() {
				out[it.Key().String()] = it.Value().Interface()
			}
			return out
		}
	}
	return viaJSON(x)
}

func viaJSON(x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// arrLen is the length of an array value.
func arrLen(v value) int {
	switch t := v.ref.(type) {
	case []value:
		return len(t)
	case []any:
		return len(t)
	case []string:
		return len(t)
	case []float64:
		return len(t)
	case []int:
		return len(t)
	case []int64:
		return len(t)
	case []bool:
		return len(t)
	}
	return 0
}

// arrAt is element i of an array value; i must be in range.
func arrAt(v value, i int) value {
	switch t := v.ref.(type) {
	case []value:
		return t[i]
	case []any:
		return fromAny(t[i])
	case []string:
		return textVal(t[i])
	case []float64:
		return value{k: kNum, n: t[i]}
	case []int:
		return intVal(int64(t[i]))
	case []int64:
		return intVal(t[i])
	case []bool:
		return value{k: kBool, b: t[i]}
	}
	return null
}

// objGet looks key up in a plain object value.
func objGet(v value, key string) value {
	switch t := v.ref.(type) {
	case map[string]any:
		x, _ := mapGet(t, key)
		return fromAny(x)
	case map[string]string:
		s, ok := mapGet(t, key)
		if !ok {
			return null
		}
		return textVal(s)
	}
	return null
}

// mapGet looks key up in a caller's map. A key that is not valid UTF-8
// reaches flagd's engine with U+FFFD in place of each bad byte, so a rule
// asking for such a name finds it; the scan only happens when the name
// asked for holds U+FFFD and is not there as it is.
func mapGet[V any](m map[string]V, key string) (V, bool) {
	if x, ok := m[key]; ok {
		return x, true
	}
	var found V
	if !strings.ContainsRune(key, utf8.RuneError) {
		return found, false
	}
	ok := false
	for k, x := range m {
		if !utf8.ValidString(k) && validUTF8(k) == key {
			found, ok = x, true
		}
	}
	return found, ok
}

// reduceState is the data object of one reduce step.
type reduceState struct {
	current     value
	accumulator value
	valueType   string
}

func (r *reduceState) get(key string) value {
	switch key {
	case "current":
		return r.current
	case "accumulator":
		return r.accumulator
	case "valueType":
		return strVal(r.valueType)
	}
	return null
}

// isObject reports whether v is any kind of JSON object.
func (v value) isObject() bool { return v.k == kObj || v.k == kRoot || v.k == kFlagd || v.k == kReduce }

// toAny converts a value to the plain Go form encoding/json produces
// (nil, bool, float64, string, []any, map[string]any), except that goInt
// numbers become engineInt. Containers that already have that form are
// returned as they are, not copied.
func (e *evalState) toAny(v value) any {
	switch v.k {
	case kNull:
		return nil
	case kBool:
		return v.b
	case kNum:
		if v.goInt() {
			return engineInt(v.n)
		}
		return v.n
	case kStr:
		return v.str()
	case kArr:
		if a, ok := v.ref.([]any); ok {
			return a
		}
		n := arrLen(v)
		out := make([]any, n)
		for i := range n {
			out[i] = e.toAny(arrAt(v, i))
		}
		return out
	case kObj:
		switch t := v.ref.(type) {
		case map[string]any:
			return t
		case map[string]string:
			out := make(map[string]any, len(t))
			for k, s := range t {
				out[k] = s
			}
			return out
		}
		return map[string]any{}
	case kRoot:
		return e.rootMap()
	case kFlagd:
		return map[string]any{"flagKey": e.f.key, "timestamp": float64(e.timestamp())}
	case kReduce:
		r := v.ref.(*reduceState)
		return map[string]any{
			"current":     e.toAny(r.current),
			"accumulator": e.toAny(r.accumulator),
			"valueType":   r.valueType,
		}
	}
	return nil
}

// truthy is JsonLogic truthiness as the reference engine defines it. Note
// that NaN is truthy there (it only tests != 0).
func truthy(v value) bool {
	if v.k == kBool {
		return v.b
	}
	return truthySlow(v)
}

func truthySlow(v value) bool {
	switch v.k {
	case kNum:
		return v.n != 0
	case kStr:
		return len(v.str()) > 0
	case kArr:
		return arrLen(v) > 0
	case kObj:
		switch t := v.ref.(type) {
		case map[string]any:
			return len(t) > 0
		case map[string]string:
			return len(t) > 0
		}
	case kRoot, kFlagd, kReduce:
		// The data always holds $flagd, and the other two have fixed keys.
		return true
	}
	return false
}

// parseFloat is strconv.ParseFloat(s, 64), ±Inf out of range, for text
// that is often not a number: when the first character rules a number out,
// it answers without building strconv's error, which allocates.
func parseFloat(s string) (f float64, ok bool) {
	t := s
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if len(t) == 0 {
		return 0, false
	}
	switch c := t[0]; {
	case c >= '0' && c <= '9', c == '.', c == 'i', c == 'I', c == 'n', c == 'N':
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// strictNumber is the reference engine's typing.ToNumber: strings parse
// (badly formed ones give 0), numbers pass, everything else is an error.
func strictNumber(v value) (float64, bool) {
	switch v.k {
	case kNum:
		return v.n, true
	case kStr:
		f, _ := parseFloat(v.str())
		return f, true
	}
	return 0, false
}

// looseNumber is the reference engine's javascript.ToNumber, used by the
// comparison operators: null is 0, booleans 1/0, blank strings 0, other
// unparsable strings and containers NaN.
func looseNumber(v value) float64 {
	switch v.k {
	case kNull:
		return 0
	case kNum:
		return v.n
	case kBool:
		if v.b {
			return 1
		}
		return 0
	case kStr:
		if strings.TrimSpace(v.str()) == "" {
			return 0
		}
		// Out of range counts as not a number too: the reference engine
		// means to keep ±Inf there but compares the wrapped error with
		// strconv.ErrRange, which never matches.
		f, ok := parseFloat(v.str())
		if !ok {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// strictString is the reference engine's typing.ToString: numbers print in
// plain decimal, null is "", strings pass, everything else is an error.
func strictString(v value) (string, bool) {
	switch v.k {
	case kStr:
		return v.str(), true
	case kNum:
		return formatPlain(v.n), true
	case kNull:
		return "", true
	}
	return "", false
}

func formatPlain(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// toInt converts like Go's int(float64) does on amd64, where the reference
// engine runs in practice: NaN and out-of-range values become MinInt64. Doing
// it explicitly keeps results identical on every architecture.
func toInt(f float64) int {
	if math.IsNaN(f) || f >= 9223372036854775807.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int(f)
}
