package load

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestVerify: a fake storm's objects, each with its writes' outcomes, and
// what the server holds afterwards; the lost writes are the ones whose
// object contradicts its last acknowledged write.
func TestVerify(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type write struct {
		verb Verb
		n    int
		// outcome: "ok", "503", "404", "transport"
		outcome string
	}
	tests := []struct {
		name     string
		writes   []write
		found    Found
		wantLost bool
		// wantChecked is false for an object with no acknowledged write.
		wantChecked bool
	}{
		{"created and kept", []write{{Create, 0, "ok"}}, Found{Exists: true, Write: 0, UID: "u"}, false, true},
		{"acknowledged create lost", []write{{Create, 0, "ok"}}, Found{}, true, true},
		{"created again under another UID", []write{{Create, 0, "ok"}}, Found{Exists: true, Write: 0, UID: "other"}, true, true},
		{"updated", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Update, 2, "ok"}}, Found{Exists: true, Write: 2, UID: "u"}, false, true},
		{"acknowledged update lost", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Update, 2, "ok"}}, Found{Exists: true, Write: 1, UID: "u"}, true, true},
		{"update after an ambiguous one", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Update, 2, "503"}}, Found{Exists: true, Write: 2, UID: "u"}, false, true},
		{"ambiguous update not applied", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Update, 2, "transport"}}, Found{Exists: true, Write: 1, UID: "u"}, false, true},
		{"refused update applied", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Update, 2, "404"}}, Found{Exists: true, Write: 2, UID: "u"}, true, true},
		{"deleted", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Delete, 2, "ok"}}, Found{}, false, true},
		{"acknowledged delete lost", []write{{Create, 0, "ok"}, {Update, 1, "ok"}, {Delete, 2, "ok"}}, Found{Exists: true, Write: 1, UID: "u"}, true, true},
		{"ambiguous delete applied", []write{{Create, 0, "ok"}, {Delete, 1, "503"}}, Found{}, false, true},
		{"ambiguous delete not applied", []write{{Create, 0, "ok"}, {Delete, 1, "transport"}}, Found{Exists: true, Write: 0, UID: "u"}, false, true},
		{"nothing acknowledged", []write{{Create, 0, "503"}, {Update, 1, "404"}, {Delete, 2, "404"}}, Found{Exists: true, Write: 0, UID: "x"}, false, false},
		{"create ambiguous, update acknowledged", []write{{Create, 0, "transport"}, {Update, 1, "ok"}, {Delete, 2, "503"}}, Found{Exists: true, Write: 1, UID: "x"}, false, true},
	}
	rec := &Record{Began: t0}
	final := map[string]Found{}
	wantLost := map[string]bool{}
	checked := 0
	for i, tt := range tests {
		name := tt.name
		for j, w := range tt.writes {
			start := t0.Add(time.Duration(i)*time.Second + time.Duration(j)*time.Millisecond)
			r := Request{Verb: w.verb, Object: name, Write: w.n, Start: start, End: start.Add(time.Microsecond)}
			switch w.outcome {
			case "ok":
				if w.verb == Create {
					r.UID = types.UID("u")
				}
			case "503":
				r.Err, r.Code = "the server is currently unable to handle the request", 503
			case "404":
				r.Err, r.Code = "not found", 404
			case "transport":
				r.Err = "connection reset by peer"
			}
			rec.Requests = append(rec.Requests, r)
		}
		if tt.found.Exists {
			final[name] = tt.found
		}
		wantLost[name] = tt.wantLost
		if tt.wantChecked {
			checked++
		}
	}
	v := Verify(rec, final)
	if v.Objects != len(tests) || v.Checked != checked {
		t.Errorf("objects %d checked %d, want %d %d", v.Objects, v.Checked, len(tests), checked)
	}
	lost := map[string]bool{}
	for _, l := range v.Lost {
		lost[l.Object] = true
		if !wantLost[l.Object] {
			t.Errorf("lost, but should not be: %s", l)
		}
	}
	for name, want := range wantLost {
		if want && !lost[name] {
			t.Errorf("%s: a lost write went unnoticed", name)
		}
	}
}
