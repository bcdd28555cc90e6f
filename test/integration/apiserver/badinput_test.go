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
// the in-process server. Every one is refused as the client's fault (400,
// 413, 415, 422; 409 where a write races resourceVersion) or, if it may be
// taken, taken as it should be (badinput.Judge examines every 2xx: a
// malformed input taken fails the test); none is a 5xx but the pinned upstream ones, and the
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
	var unexpected []string
	// Server-side apply's 500 for a body that does not fit the schema is
	// rewritten to 422 around the handler (apiserver/patchguard); the
	// request metrics, recorded inside, still count the 500.
	rewritten, taken := 0, 0
	began := time.Now()
	for _, c := range cases {
		sent := time.Now()
		a, err := set.Send(t.Context(), hc, s.ClientConfig.Host, c)
		if d := time.Since(sent); d > 2*time.Second {
			t.Logf("%s took %v", c.Name, d.Round(time.Millisecond))
		}
		what := badinput.Describe(c)
		if err != nil {
			unexpected = append(unexpected, fmt.Sprintf("%s: %v; body %s", what, err, badinput.Truncate(a.Sent)))
			continue
		}
		statuses[a.Code]++
		if a.Code == http.StatusUnprocessableEntity && strings.Contains(string(a.Body), "does not fit the schema") {
			rewritten++
		}
		if a.Code < 300 {
			taken++
		}
		if err := badinput.Judge(c, a); err != nil {
			unexpected = append(unexpected, fmt.Sprintf("%s -> %d: %v; answer %s; body %s", what, a.Code, err, badinput.Truncate(a.Body), badinput.Truncate(a.Sent)))
		}
	}
	t.Logf("%d requests in %v; statuses %v (%d taken, each examined); %d applies that did not fit the schema", len(cases), time.Since(began).Round(time.Millisecond), statuses, taken, rewritten)
	for _, u := range unexpected {
		t.Errorf("unexpected answer: %s", u)
	}
	if after := serverErrorCount(t, hc, s.ClientConfig.Host); after-before > float64(rewritten) {
		t.Errorf("apiserver_request_total counts %v 5xx answers, want at most the %d applies rewritten to 422", after-before, rewritten)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range panics {
		t.Errorf("the server panicked: %s", badinput.Truncate([]byte(p)))
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
