package badinput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Random bodies. They start from a real
// object (decoded as JSON into maps, numbers kept verbatim) so most of them
// get past decoding and reach defaulting, validation and storage, where a
// server is likelier to break than in the JSON parser.

// badUTF8 stands in for bytes Go's encoders would repair; rawBody swaps it
// back in after encoding.
const badUTF8 = "@@BADUTF8@@"

// keys a mutation adds: real field names in the wrong places, patch
// directives, and names that are not names.
var nastyKeys = []string{
	"name", "disks", "bootOrder", "cores", "sockets", "threads", "memory", "guest", "capacity", "image",
	"ports", "port", "macAddress", "metadata", "apiVersion", "kind", "resourceVersion", "uid", "status",
	"phase", "spec", "domain", "devices", "volumes", "networks", "interfaces", "finalizers",
	"$patch", "$retainKeys", "$setElementOrder/disks", "$deleteFromPrimitiveList/finalizers",
	"", " ", "\x00", badUTF8, strings.Repeat("k", 70000),
}

// nasty is a value no well-formed VMI has in that place.
func nasty(r *rand.Rand) any {
	switch r.IntN(30) {
	case 0:
		return json.Number("1e400")
	case 1:
		return json.Number("18446744073709551616")
	case 2:
		return json.Number("-9223372036854775809")
	case 3:
		return json.Number("4294967296")
	case 4:
		return json.Number("-1")
	case 5:
		return json.Number("1.5")
	case 6:
		return json.Number("-0")
	case 7:
		return json.Number("1e-400")
	case 8:
		return nil
	case 9:
		return r.IntN(2) == 0
	case 10:
		return ""
	case 11:
		return strings.Repeat("x", 1+r.IntN(200000))
	case 12:
		return badUTF8 + "tail"
	case 13:
		return "\x00\x01\u2028\ufeff"
	case 14:
		return "1e1000"
	case 15:
		return "9223372036854775807Ei"
	case 16:
		return "-9223372036854775808"
	case 17:
		return "0.000000001m"
	case 18:
		return "NaN"
	case 19:
		return []any{}
	case 20:
		return map[string]any{}
	case 21:
		return nestedList(1 + r.IntN(300))
	case 22:
		return nestedMap(1 + r.IntN(300))
	case 23:
		m := map[string]any{}
		for i := range 1 + r.IntN(3000) {
			m[fmt.Sprintf("k%d.example.com/x", i)] = "v"
		}
		return m
	case 24:
		l := make([]any, 1+r.IntN(5000))
		for i := range l {
			l[i] = map[string]any{"name": fmt.Sprintf("d%d", i)}
		}
		return l
	case 25:
		return "../../../../etc/passwd"
	case 26:
		return "Running"
	case 27:
		return "2006-01-02T15:04:05Z07:00x"
	case 28:
		return map[string]any{"$patch": []string{"delete", "replace", "merge", "bogus"}[r.IntN(4)]}
	default:
		return json.Number(fmt.Sprint(r.Int64() - r.Int64()))
	}
}

func nestedList(depth int) any {
	var v any = "leaf"
	for range depth {
		v = []any{v}
	}
	return v
}

func nestedMap(depth int) any {
	var v any = "leaf"
	for range depth {
		v = map[string]any{"a": v}
	}
	return v
}

// mutate breaks one randomly chosen place of v and returns the result.
func mutate(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := sortedKeys(x)
		if len(keys) == 0 || r.IntN(4) == 0 {
			switch {
			case len(keys) > 0 && r.IntN(3) == 0:
				delete(x, keys[r.IntN(len(keys))])
			case len(keys) > 0 && r.IntN(2) == 0:
				x[keys[r.IntN(len(keys))]] = nasty(r)
			default:
				x[nastyKeys[r.IntN(len(nastyKeys))]] = nasty(r)
			}
			return x
		}
		k := keys[r.IntN(len(keys))]
		x[k] = mutate(r, x[k])
		return x
	case []any:
		if len(x) == 0 || r.IntN(4) == 0 {
			switch r.IntN(3) {
			case 0:
				return append(x, nasty(r))
			case 1:
				if len(x) > 0 {
					return append(x, deepCopy(x[r.IntN(len(x))]))
				}
				return nasty(r)
			default:
				return nasty(r)
			}
		}
		i := r.IntN(len(x))
		x[i] = mutate(r, x[i])
		return x
	default:
		return nasty(r)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// randomPath walks from v to a random place and returns the keys on the way
// (strings for maps, ints for lists).
func randomPath(r *rand.Rand, v any) []any {
	var path []any
	for r.IntN(6) != 0 {
		switch x := v.(type) {
		case map[string]any:
			keys := sortedKeys(x)
			if len(keys) == 0 {
				return path
			}
			k := keys[r.IntN(len(keys))]
			path, v = append(path, k), x[k]
		case []any:
			if len(x) == 0 {
				return path
			}
			i := r.IntN(len(x))
			path, v = append(path, i), x[i]
		default:
			return path
		}
	}
	return path
}

func at(v any, path []any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// pointer is path as a JSON pointer (RFC 6901).
func pointer(path []any) string {
	var b strings.Builder
	for _, p := range path {
		s := fmt.Sprint(p)
		s = strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
		b.WriteString("/" + s)
	}
	return b.String()
}

// mergePatch is a merge (or strategic merge) patch that replaces what is at
// a random place of cur, up to the first list, by a broken copy of it.
func mergePatch(r *rand.Rand, cur map[string]any) any {
	path := randomPath(r, cur)
	if i := slices.IndexFunc(path, func(p any) bool { _, isInt := p.(int); return isInt }); i >= 0 {
		path = path[:i]
	}
	v := mutate(r, deepCopy(at(cur, path)))
	for i := len(path) - 1; i >= 0; i-- {
		v = map[string]any{path[i].(string): v}
	}
	return v
}

// jsonPatch is a JSON patch (RFC 6902) of 1-5 operations on real or made-up
// places of cur.
func jsonPatch(r *rand.Rand, cur map[string]any) []any {
	ops := []string{"add", "remove", "replace", "move", "copy", "test", "bogus", ""}
	var patch []any
	for range 1 + r.IntN(5) {
		op := map[string]any{"op": ops[r.IntN(len(ops))]}
		switch r.IntN(5) {
		case 0:
			op["path"] = []string{"", "/", "/spec/domain/devices/disks/99999999999999999999", "/spec/volumes/-1",
				"/spec/volumes/-", "~2", "/metadata/labels/a~1b", "/status/conditions/0/x"}[r.IntN(8)]
		default:
			op["path"] = pointer(randomPath(r, cur))
		}
		if r.IntN(2) == 0 {
			op["from"] = pointer(randomPath(r, cur))
		}
		if r.IntN(3) != 0 {
			op["value"] = mutate(r, deepCopy(at(cur, randomPath(r, cur))))
		}
		if r.IntN(10) == 0 {
			delete(op, "path")
		}
		patch = append(patch, op)
	}
	return patch
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	default:
		return v
	}
}

// toMap turns an API object into the maps mutate works on.
func toMap(obj any) map[string]any {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return decodeMap(data)
}

func decodeMap(data []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		panic(err)
	}
	return m
}

// rawBody encodes v as JSON or YAML and then puts the invalid UTF-8 in.
func rawBody(v any, asYAML bool) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if asYAML {
		if y, err := yaml.JSONToYAML(data); err == nil {
			data = y
		}
	}
	return bytes.ReplaceAll(data, []byte(badUTF8), []byte("\xff\xfe\xc3("))
}

// garble breaks a body at the byte level: flipped, dropped, repeated or
// inserted bytes, or a cut.
func garble(r *rand.Rand, body []byte) []byte {
	b := slices.Clone(body)
	for range 1 + r.IntN(4) {
		if len(b) == 0 {
			return []byte{byte(r.IntN(256))}
		}
		i := r.IntN(len(b))
		switch r.IntN(5) {
		case 0:
			b[i] ^= byte(1 << r.IntN(8))
		case 1:
			b = b[:i]
		case 2:
			j := i + r.IntN(len(b)-i)
			b = slices.Delete(b, i, j)
		case 3:
			j := i + r.IntN(min(len(b)-i, 64))
			b = slices.Insert(b, i, slices.Clone(b[i:j])...)
		default:
			const junk = "{}[]\",:\\\x00\xff"
			b = slices.Insert(b, i, junk[r.IntN(len(junk))])
		}
	}
	return b
}

// jsonNumber is a number written as given, in or out of any type's range.
func jsonNumber(s string) any { return json.Number(s) }
