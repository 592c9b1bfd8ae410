package evaluator

import (
	"encoding/json"
	"slices"
)

// op1 is an object of one member, as a rule's operations are written,
// decoded without a map: the compiler reads it as the map it stands for.
// Only rules are decoded so, and only in documents without a $ref, which
// substitution would have to look into.
type op1 struct {
	key string
	val any
}

// MarshalJSON writes the object, for the messages that quote a rule.
func (o *op1) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{o.key: o.val})
}

// A definition of lazyFlags is read member by member into defFields rather
// than decoded into a map first: the loader reads five members, and the
// maps of a definition and its variants were most of what a load
// allocated. What a member holds is decoded as the map would have held
// it, so compileFields sees the same values either way.

// variantList is a "variants" object as read: names and values, sorted by
// name once read.
type variantList struct {
	names []string
	raws  []any
}

// set adds a variant; a name read again replaces the earlier value, as in
// a map.
func (v *variantList) set(name string, raw any) {
	if i := slices.Index(v.names, name); i >= 0 {
		v.raws[i] = raw
		return
	}
	v.names = append(v.names, name)
	v.raws = append(v.raws, raw)
}

func (v *variantList) sort() {
	// Variants are few: an insertion sort moves both lists together.
	for i := 1; i < len(v.names); i++ {
		for j := i; j > 0 && v.names[j] < v.names[j-1]; j-- {
			v.names[j], v.names[j-1] = v.names[j-1], v.names[j]
			v.raws[j], v.raws[j-1] = v.raws[j-1], v.raws[j]
		}
	}
}

// compileSpan compiles the definition written in fd.span. ok is false when
// it is not JSON.
func (l *loader) compileSpan(fd *flagDef, setMeta map[string]any) (f *flag, problems []FlagProblem, ok bool) {
	d := l.decoder()
	d.data, d.pos, d.depth = fd.span, 0, defDepth
	if d.data[0] != '{' {
		// Not an object: compileFlag says so.
		if fd.raw, ok = d.decodeSpan(fd.span); !ok {
			return nil, nil, false
		}
		f, problems = l.compileFlag(fd, setMeta)
		return f, problems, true
	}
	def, ok := l.readDef()
	if !ok {
		return nil, nil, false
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, nil, false
	}
	f, problems = l.compileFields(fd, def, setMeta)
	return f, problems, true
}

// defFields reads the members of a definition object that the loader reads,
// from its opening brace to its closing one; variants go into list. ok is
// false when it is not JSON. With noRefs, the rule's operations are decoded
// as one-member objects.
func (d *fastDecoder) defFields(list *variantList, noRefs bool) (def defFields, ok bool) {
	d.pos++
	d.depth++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
	} else {
		for {
			d.space()
			if d.pos >= len(d.data) || d.data[d.pos] != '"' {
				return def, false
			}
			// The members are told apart by their bytes: boxing each name
			// of each definition would cost a lookup in the decoder's
			// strings.
			kb, plain := d.plainStr()
			if !plain {
				kv, ok := d.str()
				if !ok {
					return def, false
				}
				kb = []byte(kv.(string))
			}
			d.space()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return def, false
			}
			d.pos++
			var v any
			switch string(kb) {
			case "variants":
				if v, ok = d.variants(list); ok {
					def.variants = v
				}
			default:
				d.single = noRefs && string(kb) == "targeting"
				v, ok = d.value()
				d.single = false
				if !ok {
					break
				}
				switch string(kb) {
				case "state":
					def.state = v
				case "defaultVariant":
					def.defaultVariant = v
				case "targeting":
					def.targeting = v
				case "metadata":
					def.metadata = v
				}
			}
			if !ok {
				return def, false
			}
			more, ok := d.after('}')
			if !ok {
				return def, false
			}
			if !more {
				break
			}
		}
	}
	return def, true
}

// variants reads a "variants" member's value into list when it is an
// object, and decodes it otherwise.
func (d *fastDecoder) variants(list *variantList) (any, bool) {
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		return d.value()
	}
	if d.depth++; d.depth > maxJSONDepth {
		return nil, false
	}
	defer func() { d.depth-- }()
	list.names, list.raws = list.names[:0], list.raws[:0]
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return list, true
	}
	for {
		k, v, ok := d.member()
		if !ok {
			return nil, false
		}
		list.set(k, v)
		more, ok := d.after('}')
		if !ok {
			return nil, false
		}
		if !more {
			list.sort()
			return list, true
		}
	}
}
