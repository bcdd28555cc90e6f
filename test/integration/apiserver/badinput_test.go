package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
)

const (
	vmiPath = "/apis/virtualization.kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances"
	// target is the VMI the PUT and PATCH cases aim at.
	target = "target"

	jsonType     = "application/json"
	yamlType     = "application/yaml"
	protobufType = "application/vnd.kubernetes.protobuf"
	mergeType    = "application/merge-patch+json"
	strategicTyp = "application/strategic-merge-patch+json"
	jsonPatchTyp = "application/json-patch+json"
	applyType    = "application/apply-patch+yaml"
)

// badInput is one request a careless or hostile client sends.
type badInput struct {
	name        string
	method      string
	sub         string // after the collection's path: "", "/target" or "/target/status"
	contentType string
	query       string
	// body makes the body; cur is the target as the server holds it now
	// (nil for POST), so a PUT can carry its resourceVersion.
	body func(cur map[string]any) []byte
}

// TestBadInputNeverFailsTheServer: random and malformed VMI bodies - the
// fuzzer's corpus and beyond: deep nesting, huge strings, bodies at and
// past the 3 MiB limit, invalid UTF-8, duplicate keys, numbers out of range,
// garbage protobuf - posted, put and patched through the real server. Every
// one is taken (2xx) or refused as the client's fault (400, 413, 415, 422;
// 409 where a write races resourceVersion); none is a 5xx, and the server
// neither panics nor counts a 5xx in its metrics.
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
	if _, err := client.VirtualizationV1().VirtualMachineInstances(ns).Create(t.Context(), fullVMI(target), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(s.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = 60 * time.Second
	before := serverErrorCount(t, hc, s.ClientConfig.Host)

	cases := slices.Concat(corpusInputs(t), nastyInputs(), randomInputs(rand.New(rand.NewPCG(1, 2)), 300))
	statuses := map[int]int{}
	var unexpected, known []string
	known5xx := 0
	began := time.Now()
	for _, c := range cases {
		sent := time.Now()
		code, answer, body, err := send(t.Context(), hc, s.ClientConfig.Host, c)
		if d := time.Since(sent); d > 2*time.Second {
			t.Logf("%s took %v", c.name, d.Round(time.Millisecond))
		}
		what := fmt.Sprintf("%s: %s %s (%s)", c.name, c.method, c.sub, c.contentType)
		switch {
		case err != nil && knownUpstreamReset(c, err):
			known = append(known, fmt.Sprintf("%s: %v; body %s", what, err, truncate(body)))
		case err != nil:
			unexpected = append(unexpected, fmt.Sprintf("%s: %v; body %s", what, err, truncate(body)))
		case knownUpstream5xx(c, code, answer):
			statuses[code]++
			known5xx++
			known = append(known, fmt.Sprintf("%s -> %d %s", what, code, truncate(answer)))
		default:
			statuses[code]++
			if !acceptable(c, code) {
				unexpected = append(unexpected, fmt.Sprintf("%s -> %d %s; body %s", what, code, truncate(answer), truncate(body)))
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
		if knownUpstreamPanic(p) {
			knownPanics++
			continue
		}
		t.Errorf("the server panicked: %s", truncate([]byte(p)))
	}
	if resets > knownPanics {
		t.Errorf("%d streams reset but only %d known panics", resets, knownPanics)
	}
}

// Failures of k8s.io/apiserver and k8s.io/apimachinery themselves, not of
// this server's code: each is pinned to its request and its message so
// anything else still fails the test.
//
//   - server-side apply answers 500 when the applied object does not fit the
//     schema ("failed to create typed patch object": the handler returns
//     the structured-merge-diff error unwrapped);
//   - strategicpatch panics on a $setElementOrder list holding objects
//     (partitionPrimitivesByPresentInList hashes them), and evanphx/json-patch
//     v4 on a replace of the root without a value; the handler's finisher
//     re-panics and the client sees its HTTP/2 stream reset.
func knownUpstream5xx(c badInput, code int, answer []byte) bool {
	return code == http.StatusInternalServerError && c.contentType == applyType &&
		bytes.Contains(answer, []byte("failed to create typed patch object"))
}

func knownUpstreamReset(c badInput, err error) bool {
	return c.method == http.MethodPatch && (c.contentType == strategicTyp || c.contentType == jsonPatchTyp) &&
		strings.Contains(err.Error(), "INTERNAL_ERROR")
}

func knownUpstreamPanic(stack string) bool {
	return strings.Contains(stack, "k8s.io/apimachinery/pkg/util/strategicpatch.partitionPrimitivesByPresentInList") ||
		strings.Contains(stack, "evanphx/json-patch%2ev4.Patch.replace")
}

func acceptable(c badInput, code int) bool {
	switch {
	case code >= 200 && code < 300:
		return true
	case code == http.StatusBadRequest, code == http.StatusRequestEntityTooLarge,
		code == http.StatusUnsupportedMediaType, code == http.StatusUnprocessableEntity:
		return true
	case code == http.StatusConflict:
		// A PUT or patch whose resourceVersion the mutation changed.
		return c.method != http.MethodPost
	}
	return false
}

func send(ctx context.Context, hc *http.Client, host string, c badInput) (int, []byte, []byte, error) {
	var cur map[string]any
	if c.method != http.MethodPost {
		resp, err := hc.Get(host + vmiPath + "/" + target)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("get the target: %w", err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, nil, nil, fmt.Errorf("get the target: %d %v %s", resp.StatusCode, err, truncate(data))
		}
		cur = decodeMap(data)
	}
	body := c.body(cur)
	url := host + vmiPath + c.sub
	if c.query != "" {
		url += "?" + c.query
	}
	req, err := http.NewRequestWithContext(ctx, c.method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, body, err
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, body, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, answer, body, nil
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

func truncate(b []byte) string {
	const n = 300
	if len(b) > n {
		return fmt.Sprintf("%q... (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func fixed(b []byte) func(map[string]any) []byte { return func(map[string]any) []byte { return b } }

func post(name, contentType string, body []byte) badInput {
	return badInput{name: name, method: http.MethodPost, contentType: contentType, body: fixed(body)}
}

// vmiMap is a valid VMI, named, as maps.
func vmiMap(name string) map[string]any {
	m := toMap(fullVMI(name))
	m["apiVersion"], m["kind"] = "virtualization.kubevirt.io/v1", "VirtualMachineInstance"
	delete(m, "status")
	return m
}

// with is a valid VMI with value set at the dotted path.
func with(name, path string, value any) map[string]any {
	m := vmiMap(name)
	set(m, path, value)
	return m
}

func set(m map[string]any, path string, value any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}

// corpusInputs are the fuzzer's seeds, each as JSON-ish YAML to the VMI
// collection (a VM among them is a wrong kind there) and converted to JSON.
func corpusInputs(t *testing.T) []badInput {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "apis", "virtualization", "v1", "testdata", "kubevirt", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fuzz corpus: %v", err)
	}
	// Entries `go test -fuzz` saved, if any, are corpus too.
	saved, _ := filepath.Glob(filepath.Join("..", "..", "..", "apis", "virtualization", "validation", "testdata", "fuzz", "*", "*"))
	var cases []badInput
	for _, f := range slices.Concat(files, saved) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(data), "go test fuzz v1\n") {
			lit := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(string(data), "go test fuzz v1\n")), "[]byte("), ")")
			s, err := strconv.Unquote(lit)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			data = []byte(s)
		}
		name := filepath.Base(f)
		cases = append(cases, post("corpus "+name+" as YAML", yamlType, data), post("corpus "+name+" as JSON", jsonType, data))
	}
	return cases
}
