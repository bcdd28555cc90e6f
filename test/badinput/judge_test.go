package badinput

import (
	"net/http"
	"strings"
	"testing"
)

// TestJudge: every 2xx is examined. A malformed input taken is wrong (the
// bad-input tests used to count any 2xx as right), and so is a well-formed
// one taken without the warning for what was dropped, or answered with
// another object; refusals as the client's fault are right, others not.
func TestJudge(t *testing.T) {
	s := Set{Namespace: "ns"}
	valid := rawBody(s.vmiMap("a"), false)
	target := rawBody(s.vmiMap(Target), false)
	answer := func(name string) []byte { return rawBody(s.vmiMap(name), false) }
	postJSON := func(body []byte) Input { return taken(post("p", jsonType, body)) }
	patch := func(contentType, body string) Input {
		return Input{Name: "p", Method: http.MethodPatch, Sub: "/" + Target, ContentType: contentType, Body: fixed([]byte(body)), Taken: WellFormed}
	}
	withUnknown := []byte(strings.Replace(string(valid), `"spec":{`, `"spec":{"bogus":1,`, 1))
	withDuplicate := []byte(strings.Replace(string(valid), `"spec":{`, `"spec":{"hostname":"a","hostname":"b",`, 1))
	tests := []struct {
		name  string
		c     Input
		a     Answer
		right bool
	}{
		{"valid, taken", postJSON(valid), Answer{Code: 201, Sent: valid, Body: answer("a")}, true},
		{"valid, refused", postJSON(valid), Answer{Code: 422}, true},
		{"malformed, refused", post("m", jsonType, []byte("{")), Answer{Code: 400}, true},
		{"malformed, taken", post("m", jsonType, []byte("{")), Answer{Code: 201, Body: answer("a")}, false},
		{"not even JSON, taken", postJSON([]byte("{")), Answer{Code: 201, Sent: []byte("{"), Body: answer("a")}, false},
		{"a number where a count goes, taken", postJSON([]byte(strings.Replace(string(valid), `"spec":{`, `"spec":{"terminationGracePeriodSeconds":"x",`, 1))),
			Answer{Code: 201, Body: answer("a")}, false},
		{"unknown field dropped with a warning", postJSON(withUnknown), Answer{Code: 201, Sent: withUnknown, Body: answer("a"), Warnings: []string{`299 - "unknown field \"spec.bogus\""`}}, true},
		{"unknown field dropped silently", postJSON(withUnknown), Answer{Code: 201, Sent: withUnknown, Body: answer("a")}, false},
		{"duplicate field dropped silently", postJSON(withDuplicate), Answer{Code: 201, Sent: withDuplicate, Body: answer("a")}, false},
		{"unknown field taken under Strict", Input{Name: "p", Method: http.MethodPost, ContentType: jsonType, Query: "fieldValidation=Strict", Taken: WellFormed},
			Answer{Code: 201, Sent: withUnknown, Body: answer("a"), Warnings: []string{"299 - x"}}, false},
		{"invalid UTF-8, taken", postJSON(nil), Answer{Code: 201, Sent: rawBody(s.vmiMap("bad"+badUTF8), false), Body: answer("bad")}, false},
		{"a pod, taken", postJSON(nil), Answer{Code: 201, Sent: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}`), Body: answer("a")}, false},
		{"answered with another object", postJSON(valid), Answer{Code: 201, Sent: valid, Body: answer("b")}, false},
		{"answered with no object", postJSON(valid), Answer{Code: 200, Sent: valid, Body: []byte(`{"kind":"Status"}`)}, false},
		{"a merge patch that keeps a VMI", patch(mergeType, `{"metadata":{"labels":{"a":"b"}}}`),
			Answer{Code: 200, Sent: []byte(`{"metadata":{"labels":{"a":"b"}}}`), Before: target, Body: answer(Target)}, true},
		{"a merge patch that breaks the type", patch(mergeType, `{"spec":{"domain":{"cpu":{"cores":"x"}}}}`),
			Answer{Code: 200, Sent: []byte(`{"spec":{"domain":{"cpu":{"cores":"x"}}}}`), Before: target, Body: answer(Target)}, false},
		{"a JSON patch that cannot apply", patch(jsonPatchTyp, `[{"op":"remove","path":"/nope"}]`),
			Answer{Code: 200, Sent: []byte(`[{"op":"remove","path":"/nope"}]`), Before: target, Body: answer(Target)}, false},
		{"a strategic merge patch that keeps a VMI", patch(strategicTyp, `{"spec":{"hostname":"h"}}`),
			Answer{Code: 200, Sent: []byte(`{"spec":{"hostname":"h"}}`), Before: target, Body: answer(Target)}, true},
		{"garbage protobuf, taken", taken(post("pb", protobufType, []byte("k8s\x00"))), Answer{Code: 201, Sent: []byte("k8s\x00"), Body: answer("a")}, false},
		{"a POST racing", postJSON(valid), Answer{Code: 409}, false},
		{"a PUT racing", Input{Method: http.MethodPut}, Answer{Code: 409}, true},
		{"a server error", postJSON(valid), Answer{Code: 500}, false},
		{"forbidden", postJSON(valid), Answer{Code: 403}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a.Sent == nil && tt.c.Body != nil {
				tt.a.Sent = tt.c.Body(nil)
			}
			err := Judge(tt.c, tt.a)
			if (err == nil) != tt.right {
				t.Errorf("Judge = %v, want right %v", err, tt.right)
			}
		})
	}
}
