package apiserver

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/test/badinput"
)

// TestBadInputNeverFailsTheServer: random and malformed VMI bodies - the
// fuzzer's corpus and beyond (test/badinput): deep nesting, huge strings,
// bodies at and past the 3 MiB limit, invalid UTF-8, duplicate keys,
// numbers out of range, garbage protobuf - posted, put and patched through
// the in-process server. Every one is taken (2xx) or refused as the
// client's fault (400, 413, 415, 422; 409 where a write races
// resourceVersion); none is a 5xx but the pinned upstream ones, and the
// server neither panics (but the pinned upstream panics) nor counts another
// 5xx in its metrics.
func TestBadInputNeverFailsTheServer(t *testing.T) {
	var mu sync.Mutex
	var panics []string
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(slices.Clone(saved), func(_ context.Context, r any) {
		mu.Lock()
		defer mu.Unlock()
		panics = append(panics, fmt.Sprint(r))
	})
	t.Cleanup(func() { utilruntime.PanicHandlers = saved })

	s, client := start(t)
	set := badinput.Set{Namespace: ns}
	if _, err := client.VirtualizationV1().VirtualMachineInstances(ns).Create(t.Context(), set.Target(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(s.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = 60 * time.Second
	before := serverErrorCount(t, hc, s.ClientConfig.Host)

	cases, err := set.All("../../..")
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[int]int{}
	var unexpected, known []string
	known5xx := 0
	began := time.Now()
	for _, c := range cases {
		sent := time.Now()
		a, err := set.Send(t.Context(), hc, s.ClientConfig.Host, c)
		if d := time.Since(sent); d > 2*time.Second {
			t.Logf("%s took %v", c.Name, d.Round(time.Millisecond))
		}
		what := badinput.Describe(c)
		switch {
		case err != nil && badinput.KnownUpstreamReset(c, err):
			known = append(known, fmt.Sprintf("%s: %v; body %s", what, err, badinput.Truncate(a.Sent)))
		case err != nil:
			unexpected = append(unexpected, fmt.Sprintf("%s: %v; body %s", what, err, badinput.Truncate(a.Sent)))
		case badinput.KnownUpstream5xx(c, a.Code, a.Body):
			statuses[a.Code]++
			known5xx++
			known = append(known, fmt.Sprintf("%s -> %d %s", what, a.Code, badinput.Truncate(a.Body)))
		default:
			statuses[a.Code]++
			if !badinput.Acceptable(c, a.Code) {
				unexpected = append(unexpected, fmt.Sprintf("%s -> %d %s; body %s", what, a.Code, badinput.Truncate(a.Body), badinput.Truncate(a.Sent)))
			}
		}
	}
	t.Logf("%d requests in %v; statuses %v", len(cases), time.Since(began).Round(time.Millisecond), statuses)
	for _, k := range known {
		t.Logf("known upstream failure: %s", k)
	}
	for _, u := range unexpected {
		t.Errorf("unexpected answer: %s", u)
	}
	if after := serverErrorCount(t, hc, s.ClientConfig.Host); after-before != float64(known5xx) {
		t.Errorf("apiserver_request_total counts %v 5xx answers, want only the %d known ones", after-before, known5xx)
	}
	mu.Lock()
	defer mu.Unlock()
	resets := 0
	for _, k := range known {
		if strings.Contains(k, "INTERNAL_ERROR") {
			resets++
		}
	}
	knownPanics := 0
	for _, p := range panics {
		if badinput.KnownUpstreamPanic(p) {
			knownPanics++
			continue
		}
		t.Errorf("the server panicked: %s", badinput.Truncate([]byte(p)))
	}
	if resets > knownPanics {
		t.Errorf("%d streams reset but only %d known panics", resets, knownPanics)
	}
}

// serverErrorCount sums apiserver_request_total over the 5xx codes.
func serverErrorCount(t *testing.T, hc *http.Client, host string) float64 {
	t.Helper()
	resp, err := hc.Get(host + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	var sum float64
	seen := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		seen = true
		if !strings.Contains(line, `code="5`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("/metrics: %q: %v", line, err)
		}
		sum += v
	}
	if !seen {
		t.Fatal("/metrics has no apiserver_request_total")
	}
	return sum
}
