package badinput

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
)

// Nasty are the hand-written cases.
func (s Set) Nasty() []Input {
	valid := rawBody(s.vmiMap("valid"), false)
	const limit = 3 << 20 // k8s.io/apiserver's MaxRequestBodyBytes
	pad := func(name string, size int) []byte {
		b := rawBody(s.vmiMap(name), false)
		return append(b[:len(b)-1], append(bytes.Repeat([]byte(" "), size-len(b)), '}')...)
	}
	deep := func(open, close string, depth int) []byte {
		b := []byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"deep"},"spec":{"domain":{"cpu":`)
		b = append(b, strings.Repeat(open, depth)...)
		b = append(b, "1"...)
		b = append(b, strings.Repeat(close, depth)...)
		return append(b, "}}}"...)
	}
	dup := func(name, query string) Input {
		b := bytes.Replace(rawBody(s.vmiMap(name), false), []byte(`"metadata":{`), []byte(`"metadata":{"name":"other-name",`), 1)
		b = bytes.Replace(b, []byte(`"spec":{`), []byte(`"spec":{"hostname":"a","hostname":"b",`), 1)
		c := post("duplicate keys "+query, jsonType, b)
		c.Query = query
		return c
	}
	laughs := "apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  Name: laughs\n  annotations:\n    a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i := 1; i < 10; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		laughs += fmt.Sprintf("    a%d: &a%d [%s,%s,%s,%s,%s,%s,%s,%s,%s]\n", i, i, p, p, p, p, p, p, p, p, p)
	}
	var yamlBlock strings.Builder
	yamlBlock.WriteString("apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  Name: block\nspec:\n")
	for i := range 1000 {
		fmt.Fprintf(&yamlBlock, "%sa:\n", strings.Repeat(" ", 2*(i+1)))
	}
	manyDisks := func(name string, n int) map[string]any {
		m := s.vmiMap(name)
		disks, vols := make([]any, n), make([]any, n)
		for i := range n {
			disks[i] = map[string]any{"name": fmt.Sprintf("d%d", i), "bootOrder": 1}
			vols[i] = map[string]any{"name": fmt.Sprintf("d%d", i), "emptyDisk": map[string]any{"capacity": "1Gi"}}
		}
		set(m, "spec.domain.devices.disks", disks)
		set(m, "spec.volumes", vols)
		return m
	}
	manyLabels := s.vmiMap("many-labels")
	labels := map[string]any{}
	for i := range 20000 {
		labels[fmt.Sprintf("l%d.example.com/k", i)] = "v"
	}
	set(manyLabels, "metadata.labels", labels)
	garbagePB := make([]byte, 4096)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range garbagePB {
		garbagePB[i] = byte(r.IntN(256))
	}
	huge := func(n int) string { return strings.Repeat("h", n) }

	cases := []Input{
		taken(post("valid", jsonType, valid)),
		post("empty", jsonType, nil),
		post("null", jsonType, []byte("null")),
		post("list", jsonType, []byte("[]")),
		post("string", jsonType, []byte(`"vmi"`)),
		post("number", jsonType, []byte("0")),
		post("byte order mark", jsonType, append([]byte("\xef\xbb\xbf"), rawBody(s.vmiMap("bom"), false)...)),
		post("two objects", jsonType, append(rawBody(s.vmiMap("two-a"), false), rawBody(s.vmiMap("two-b"), false)...)),
		post("empty yaml", yamlType, nil),
		// The first document is decoded, the rest ignored, as for every
		// resource of a Kubernetes apiserver: taken as doc-a.
		taken(post("yaml documents", yamlType, []byte("---\n"+string(rawBody(s.vmiMap("doc-a"), true))+"---\n"+string(rawBody(s.vmiMap("doc-b"), true))))),
		post("deep json lists", jsonType, deep("[", "]", 100000)),
		post("deep json objects", jsonType, deep(`{"a":`, "}", 100000)),
		post("deep json at the top", jsonType, []byte(strings.Repeat("[", 1<<20))),
		post("deep yaml flow", yamlType, deep("[", "]", 100000)),
		post("deep yaml block", yamlType, []byte(yamlBlock.String())),
		post("yaml billion laughs", yamlType, []byte(laughs)),
		post("yaml tags", yamlType, []byte("apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: !!binary aGVsbG8=\nspec: !!python/object:os.system {}\n")),
		post("yaml merge keys", yamlType, []byte("apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nx: &x {Name: merge}\nmetadata:\n  <<: *x\n  <<: [*x, *x]\n")),
		post("huge kernel args", jsonType, rawBody(s.with("huge-args", "spec.domain.firmware.kernelBoot.kernelArgs", huge(limit-8192)), false)),
		post("huge user data", jsonType, rawBody(s.with("huge-userdata", "spec.volumes", []any{map[string]any{"name": "cloudinit",
			"cloudInitNoCloud": map[string]any{"userData": huge(limit - 8192)}}}), false)),
		post("huge name", jsonType, rawBody(s.vmiMap(huge(1<<20)), false)),
		post("huge label", jsonType, rawBody(s.with("huge-label", "metadata.labels", map[string]any{"a": huge(1 << 20)}), false)),
		post("huge annotation", jsonType, rawBody(s.with("huge-annotation", "metadata.annotations", map[string]any{"a": huge(2 << 20)}), false)),
		taken(post("annotation just under etcd's limit", jsonType, rawBody(s.with("etcd-limit", "metadata.annotations", map[string]any{"a": huge(250 << 10)}), false))),
		// The API bounds no image reference, as a Pod's does not.
		taken(post("huge image", yamlType, rawBody(s.with("huge-image", "spec.domain.firmware.kernelBoot.container.image", huge(1<<20)), true))),
		taken(post("body of exactly 3 MiB", jsonType, pad("exactly-3mib", limit))),
		post("body of 3 MiB and a byte", jsonType, pad("over-3mib", limit+1)),
		post("body of 10 MiB", jsonType, pad("ten-mib", 10<<20)),
		post("3 MiB of whitespace", jsonType, bytes.Repeat([]byte(" "), limit)),
		post("3 MiB yaml", yamlType, append(rawBody(s.vmiMap("yaml-3mib"), true), bytes.Repeat([]byte("# comment\n"), limit/10)...)),
		post("random bytes", jsonType, garbagePB),
		post("random bytes as yaml", yamlType, garbagePB),
		post("invalid utf-8 name", jsonType, rawBody(s.vmiMap("bad"+badUTF8), false)),
		post("invalid utf-8 kernel args", jsonType, rawBody(s.with("utf8-args", "spec.domain.firmware.kernelBoot.kernelArgs", badUTF8), false)),
		post("invalid utf-8 key", jsonType, rawBody(s.with("utf8-key", "spec."+badUTF8, 1), false)),
		post("invalid utf-8 label", yamlType, rawBody(s.with("utf8-label", "metadata.labels", map[string]any{badUTF8: badUTF8}), true)),
		post("utf-16", "application/json; charset=utf-16", []byte("\xff\xfe{\x00}\x00")),
		dup("duplicate keys", ""),
		dup("duplicate keys strict", "fieldValidation=Strict"),
		dup("duplicate keys warn", "fieldValidation=Warn"),
		post("duplicate keys yaml", yamlType, []byte("apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  Name: a\n  Name: b\nspec: {}\nspec: {}\n")),
		post("many disks all boot order 1", jsonType, rawBody(manyDisks("many-disks", 20000), false)),
		post("too many disks for the limit", jsonType, rawBody(manyDisks("too-many-disks", 100000), false)),
		taken(post("many labels", jsonType, rawBody(manyLabels, false))),
		post("xml", "application/xml", []byte("<vmi/>")),
		// Without a content type the body is read as JSON; a charset
		// parameter is ignored (JSON is UTF-8): both taken if the body is.
		taken(post("no content type", "", rawBody(s.vmiMap("no-content-type"), false))),
		taken(post("unknown charset", "application/json; charset=bogus", rawBody(s.vmiMap("charset"), false))),
		post("apply type on create", applyType, rawBody(s.vmiMap("apply-create"), false)),
		post("protobuf garbage", protobufType, garbagePB),
		post("protobuf magic then garbage", protobufType, append([]byte("k8s\x00"), garbagePB...)),
		post("protobuf magic and a huge length", protobufType, []byte("k8s\x00\x0a\xff\xff\xff\xff\x0f\x0a")),
		post("protobuf magic and nothing", protobufType, []byte("k8s\x00")),
		post("protobuf json body", protobufType, rawBody(s.vmiMap("pb-json"), false)),
		{Name: "unknown field validation", Method: http.MethodPost, ContentType: jsonType, Query: "fieldValidation=Bogus", Body: fixed(rawBody(s.vmiMap("field-validation"), false))},
		{Name: "huge field manager", Method: http.MethodPost, ContentType: jsonType, Query: "fieldManager=" + huge(200), Body: fixed(rawBody(s.vmiMap("manager"), false))},
		{Name: "dry run garbage", Method: http.MethodPost, ContentType: jsonType, Query: "dryRun=Maybe", Body: fixed(rawBody(s.vmiMap("dry-run"), false))},
		{Name: "dry run of a huge object", Method: http.MethodPost, ContentType: jsonType, Query: "dryRun=All",
			Body: fixed(rawBody(s.with("dry-huge", "spec.domain.firmware.kernelBoot.kernelArgs", huge(limit-8192)), false))},
		post("wrong namespace", jsonType, rawBody(s.with("wrong-ns", "metadata.namespace", "other"), false)),
		post("generate name only, huge", jsonType, rawBody(s.with("", "metadata.generateName", huge(300)), false)),
		// The fields the server owns are its own on create, whatever the
		// client put there: taken with the server's.
		takenIf(post("resource version on create", jsonType, rawBody(s.with("rv", "metadata.resourceVersion", "abc"), false)),
			"the client's resourceVersion kept", func(got map[string]any) bool { return at(got, []any{"metadata", "resourceVersion"}) != "abc" }),
		takenIf(post("deletion timestamp on create", jsonType, rawBody(s.with("deleting", "metadata.deletionTimestamp", "2020-01-01T00:00:00Z"), false)),
			"created deleting", func(got map[string]any) bool { return at(got, []any{"metadata", "deletionTimestamp"}) == nil }),
		post("garbage creation timestamp", jsonType, rawBody(s.with("created", "metadata.creationTimestamp", "yesterday"), false)),
		post("garbage owner reference", jsonType, rawBody(s.with("owned", "metadata.ownerReferences", []any{map[string]any{"uid": badUTF8, "controller": "yes"}}), false)),
		takenIf(post("garbage managed fields", jsonType, rawBody(s.with("managed", "metadata.managedFields", []any{map[string]any{"manager": "m", "operation": "Apply",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"k:{bad": map[string]any{}}}}}), false)),
			"the garbage managed fields kept", func(got map[string]any) bool { return !strings.Contains(fmt.Sprint(got["metadata"]), "k:{bad") }),
		post("status on create", jsonType, rawBody(s.with("status", "status", map[string]any{"phase": "Bogus", "conditions": nestedList(50)}), false)),
	}
	for _, n := range []struct{ path, value string }{
		{"spec.domain.cpu.cores", "1e400"}, {"spec.domain.cpu.cores", "18446744073709551616"}, {"spec.domain.cpu.cores", "-1"},
		{"spec.domain.cpu.cores", "1.5"}, {"spec.domain.cpu.sockets", "4294967296"}, {"spec.domain.cpu.threads", "4294967295"},
		{"spec.terminationGracePeriodSeconds", "9223372036854775808"}, {"spec.terminationGracePeriodSeconds", "-9223372036854775808"},
		{"spec.terminationGracePeriodSeconds", "9223372036854775807"},
		{"spec.domain.memory.guest", `"1e1000"`}, {"spec.domain.memory.guest", `"9223372036854775807Ei"`},
		{"spec.domain.memory.guest", `"-1"`}, {"spec.domain.memory.guest", `"0.000000001m"`}, {"spec.domain.memory.guest", "1e308"},
		{"spec.domain.resources.requests.memory", `"99999999999999999999999999999999Ei"`},
		{"spec.domain.resources.limits.memory", `"1e-1000"`},
		{"spec.domain.memory.hugepages.pageSize", `"1e18"`},
	} {
		b := rawBody(s.with(fmt.Sprintf("num-%d", len(cases)), n.path, rawNumber(n.value)), false)
		c := post("number "+n.path+"="+n.value, jsonType, b)
		if n.value == "9223372036854775807" {
			c = taken(c) // the largest int64: in range
		}
		cases = append(cases, c)
	}
	return append(cases, s.nastyWrites(limit)...)
}

func rawNumber(v string) any {
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	return jsonNumber(v)
}

// nastyWrites are hand-written PUTs and patches of the target.
func (s Set) nastyWrites(limit int) []Input {
	put := func(name, sub string, edit func(m map[string]any)) Input {
		return Input{Name: name, Method: http.MethodPut, Sub: sub, ContentType: jsonType, Body: func(cur map[string]any) []byte {
			m := deepCopy(cur).(map[string]any)
			edit(m)
			return rawBody(m, false)
		}}
	}
	patch := func(name, contentType, query, body string) Input {
		return Input{Name: name, Method: http.MethodPatch, Sub: "/" + target, ContentType: contentType, Query: query, Body: fixed([]byte(body))}
	}
	copyBomb := `[{"op":"add","path":"/metadata/annotations","value":{"a":"` + strings.Repeat("b", 1000) + `"}}`
	for i := range 40 {
		copyBomb += fmt.Sprintf(`,{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/c%d"}`, i)
	}
	copyBomb += "]"
	manyOps := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/kind","value":"VirtualMachineInstance"},`, 20000), ",") + "]"
	return []Input{
		put("put huge kernel args", "/"+target, func(m map[string]any) {
			set(m, "spec.domain.firmware.kernelBoot.kernelArgs", strings.Repeat("k", limit-16384))
		}),
		// An update without a resourceVersion is unconditional.
		taken(put("put without resource version", "/"+target, func(m map[string]any) { delete(m["metadata"].(map[string]any), "resourceVersion") })),
		put("put other name", "/"+target, func(m map[string]any) { set(m, "metadata.name", "other") }),
		put("put null spec", "/"+target, func(m map[string]any) { m["spec"] = nil }),
		// A field the type does not have ("a"), dropped with a warning.
		taken(put("put deep spec", "/"+target, func(m map[string]any) { set(m, "spec.domain.cpu", nestedMap(5000)) })),
		put("put status phase garbage", "/"+target+"/status", func(m map[string]any) { set(m, "status.phase", "Bogus"+badUTF8) }),
		put("put null status", "/"+target+"/status", func(m map[string]any) { m["status"] = nil }),
		put("put many conditions", "/"+target+"/status", func(m map[string]any) {
			conds := make([]any, 20000)
			for i := range conds {
				conds[i] = map[string]any{"type": "Ready", "status": "Maybe", "lastTransitionTime": "never"}
			}
			set(m, "status.conditions", conds)
		}),
		put("put status interfaces garbage", "/"+target+"/status", func(m map[string]any) {
			set(m, "status.interfaces", []any{map[string]any{"ipAddress": "999.1.1.1", "ipAddresses": []any{badUTF8, 1e300}, "mac": nestedList(100)}})
		}),
		put("put status node and phase", "/"+target+"/status", func(m map[string]any) {
			set(m, "status.nodeName", strings.Repeat("n", 1<<20))
			set(m, "status.phase", "Running")
		}),
		patch("merge null", mergeType, "", "null"),
		patch("merge list", mergeType, "", "[]"),
		patch("merge deep", mergeType, "", `{"spec":`+strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100001)),
		patch("merge rename", mergeType, "", `{"metadata":{"name":"other"}}`),
		patch("merge old resource version", mergeType, "", `{"metadata":{"resourceVersion":"1"}}`),
		patch("merge null spec", mergeType, "", `{"spec":null}`),
		patch("merge huge annotation", mergeType, "", `{"metadata":{"annotations":{"a":"`+strings.Repeat("a", limit-1024)+`"}}}`),
		patch("merge invalid utf-8", mergeType, "", "{\"spec\":{\"hostname\":\"\xff\xfe\"}}"),
		patch("merge number out of range", mergeType, "", `{"spec":{"domain":{"cpu":{"cores":1e400}}}}`),
		patch("strategic delete directive", strategicTyp, "", `{"spec":{"domain":{"devices":{"disks":[{"$patch":"delete"}]}}}}`),
		patch("strategic delete everything", strategicTyp, "", `{"$patch":"delete"}`),
		patch("strategic bogus directive", strategicTyp, "", `{"spec":{"volumes":[{"$patch":"bogus"}]}}`),
		patch("strategic retain keys not a list", strategicTyp, "", `{"spec":{"$retainKeys":5}}`),
		patch("strategic element order garbage", strategicTyp, "", `{"spec":{"domain":{"devices":{"$setElementOrder/disks":[{"name":1},null,7]}}}}`),
		// Removes "x" from the finalizers, which have none: a no-op.
		taken(patch("strategic delete from primitive list", strategicTyp, "", `{"metadata":{"$deleteFromPrimitiveList/finalizers":"x"}}`)),
		patch("strategic list of lists", strategicTyp, "", `{"spec":{"volumes":[[[]]]}}`),
		patch("strategic deep", strategicTyp, "", `{"spec":{"domain":`+strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100002)),
		patch("json patch copy bomb", jsonPatchTyp, "", copyBomb),
		patch("json patch 20000 tests", jsonPatchTyp, "", manyOps),
		patch("json patch move into itself", jsonPatchTyp, "", `[{"op":"move","from":"/spec","path":"/spec/domain"}]`),
		patch("json patch index out of range", jsonPatchTyp, "", `[{"op":"add","path":"/spec/volumes/99999999999999999999","value":1}]`),
		patch("json patch negative index", jsonPatchTyp, "", `[{"op":"remove","path":"/spec/volumes/-1"}]`),
		patch("json patch not a list", jsonPatchTyp, "", `{}`),
		patch("json patch null op", jsonPatchTyp, "", `[null,1,"x"]`),
		patch("json patch remove root", jsonPatchTyp, "", `[{"op":"remove","path":""}]`),
		patch("json patch replace root", jsonPatchTyp, "", `[{"op":"replace","path":"","value":[]}]`),
		patch("apply garbage", applyType, "fieldManager=fuzz", "{{{"),
		patch("apply without manager", applyType, "", string(rawBody(s.vmiMap(target), true))),
		patch("apply wrong kind", applyType, "fieldManager=fuzz&force=true", "apiVersion: v1\nkind: Pod\nmetadata:\n  Name: target\n"),
		patch("apply numbers out of range", applyType, "fieldManager=fuzz&force=true", string(rawBody(s.with(target, "spec.domain.cpu.cores", jsonNumber("1e400")), true))),
		patch("apply deep", applyType, "fieldManager=fuzz", "apiVersion: virtualization.kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  Name: target\nspec: "+strings.Repeat("[", 100000)),
		patch("unknown patch type", "application/bogus-patch+json", "", "{}"),
	}
}

// Random are n seeded random variations of the valid VMI, posted as JSON
// and YAML, put to the target and its status, and patched into it in every
// patch type. A variation may still be a well-formed VMI (a mutation can
// drop an optional field, or put a valid value): each may be taken if it is
// (WellFormed).
func (s Set) Random(r *rand.Rand, n int) []Input {
	var cases []Input
	for i := range n {
		name := fmt.Sprintf("random %d", i)
		seed := r.Uint64()
		rr := rand.New(rand.NewPCG(seed, uint64(i)))
		switch kind := i % 10; kind {
		case 0, 1, 2, 3:
			m := s.vmiMap(fmt.Sprintf("random-%d", i))
			v := any(m)
			for range 1 + rr.IntN(4) {
				v = mutate(rr, v)
			}
			asYAML := kind%2 == 1
			body := rawBody(v, asYAML)
			if rr.IntN(4) == 0 {
				body = garble(rr, body)
			}
			ct := jsonType
			if asYAML {
				ct = yamlType
			}
			cases = append(cases, post(name+" post "+ct, ct, body))
		case 4, 5:
			sub := "/" + target
			if kind == 5 {
				sub += "/status"
			}
			cases = append(cases, Input{Name: name + " put " + sub, Method: http.MethodPut, Sub: sub, ContentType: jsonType,
				Body: func(cur map[string]any) []byte {
					var v any = deepCopy(cur)
					if kind == 5 && rr.IntN(2) == 0 {
						m := v.(map[string]any)
						m["status"] = mutate(rr, m["status"])
					} else {
						v = mutate(rr, v)
					}
					return rawBody(v, false)
				}})
		case 6, 7:
			ct := []string{mergeType, strategicTyp}[kind-6]
			cases = append(cases, Input{Name: name + " patch " + ct, Method: http.MethodPatch, Sub: "/" + target, ContentType: ct,
				Body: func(cur map[string]any) []byte { return rawBody(mergePatch(rr, cur), false) }})
		case 8:
			cases = append(cases, Input{Name: name + " json patch", Method: http.MethodPatch, Sub: "/" + target, ContentType: jsonPatchTyp,
				Body: func(cur map[string]any) []byte { return rawBody(jsonPatch(rr, cur), false) }})
		case 9:
			cases = append(cases, Input{Name: name + " apply", Method: http.MethodPatch, Sub: "/" + target, ContentType: applyType,
				Query: "fieldManager=fuzz&force=true", Body: func(cur map[string]any) []byte {
					m := s.vmiMap(target)
					maps.Copy(m, map[string]any{"spec": deepCopy(cur["spec"])})
					return rawBody(mutate(rr, m), true)
				}})
		}
		if i%17 == 0 {
			cases = append(cases, post(name+" protobuf", protobufType, garble(rr, append([]byte("k8s\x00"), rawBody(s.vmiMap("pb"), false)...))))
		}
	}
	for i := range cases {
		cases[i].Taken = WellFormed
	}
	return cases
}
