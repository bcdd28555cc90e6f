package apipath

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"kubevirt.dev/virt/bench/load"
)

// Profile is where one server spent its CPU while it served creates.
type Profile struct {
	Server, Target string
	Clients        int
	// File is the saved pprof profile.
	File string
	// Shares are the fraction of CPU samples with a frame in each bucket
	// (buckets overlap: a sample may count in several).
	Shares map[string]float64
	// CPUSeconds is the CPU the profile saw per wall second.
	CPUSeconds float64
}

// Buckets of the servers' CPU, by function-name regexp.
var Buckets = []struct{ Name, Regexp string }{
	// Frames only the connection's own goroutine has (framing, encryption,
	// socket I/O): every handler runs below http2's runHandler, so the
	// package name alone would match everything.
	{"HTTP/2 framing + TLS + socket I/O", `crypto/|http2\.\(\*Framer\)|hpack|internal/poll`},
	{"authentication + authorization", `apiserver/pkg/authentication/|apiserver/pkg/authorization/|plugin/pkg/auth/|pkg/kubeapiserver/authorizer`},
	{"admission", `pkg/admission`},
	{"managed fields (server-side apply bookkeeping)", `fieldmanager|structured-merge-diff`},
	{"decode + encode", `serializer|gogo/protobuf|protobuf/proto|encoding/json|json-iterator|sigs.k8s.io/json`},
	{"our defaults + validation", `kubevirt.dev/virt/apis`},
	{"storage: etcd (client and server)", `go.etcd.io`},
	{"watch cache", `storage/cacher`},
	{"Go GC + allocation", `runtime\.gcBgMarkWorker|runtime\.mallocgc|runtime\.gcDrain|runtime\.scanobject`},
}

// profileCreates drives tg with clients creates for d while fetching a CPU
// profile of d-2s from profileURL with client, saves it under dir and
// breaks it into Buckets with `go tool pprof`.
func profileCreates(ctx context.Context, tg Target, clients int, d time.Duration, server string, client *http.Client, profileURL, dir string) (Profile, error) {
	p := Profile{Server: server, Target: tg.Name, Clients: clients, Shares: map[string]float64{}}
	secs := int((d - 2*time.Second).Seconds())
	done := make(chan error, 1)
	var data []byte
	go func() {
		time.Sleep(time.Second) // the load is up before the profile starts
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s?seconds=%d", profileURL, secs), nil)
		if err != nil {
			done <- err
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			done <- fmt.Errorf("profile %s: %w", server, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			done <- fmt.Errorf("profile %s: %s: %s", server, resp.Status, msg)
			return
		}
		data, err = io.ReadAll(resp.Body)
		done <- err
	}()
	load.Run(ctx, clients, d, 0, func(ctx context.Context, _ int) error { return tg.Create(ctx) })
	if err := <-done; err != nil {
		return p, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p, err
	}
	p.File = filepath.Join(dir, strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(server)+".pprof")
	if err := os.WriteFile(p.File, data, 0o644); err != nil {
		return p, err
	}
	total, shares, err := Shares(ctx, p.File)
	if err != nil {
		return p, err
	}
	p.CPUSeconds, p.Shares = total/float64(secs), shares
	return p, nil
}

// Shares breaks a saved CPU profile into Buckets; total is its CPU seconds.
func Shares(ctx context.Context, file string) (total float64, shares map[string]float64, err error) {
	total, err = pprofTotal(ctx, file, "")
	if err != nil {
		return 0, nil, err
	}
	shares = map[string]float64{}
	for _, b := range Buckets {
		v, err := pprofTotal(ctx, file, b.Regexp)
		if err != nil {
			return 0, nil, err
		}
		if total > 0 {
			shares[b.Name] = v / total
		}
	}
	return total, shares, nil
}

var (
	showing = regexp.MustCompile(`Showing nodes accounting for ([0-9.]+)(ms|s|min),`)
	total   = regexp.MustCompile(`Total samples = ([0-9.]+)(ms|s|min)`)
)

// pprofTotal is the CPU seconds of the samples with a frame matching
// focus (all samples when empty), from `go tool pprof -top`: with every
// node shown, "Showing nodes accounting for" is the sum of the kept
// samples.
func pprofTotal(ctx context.Context, file, focus string) (float64, error) {
	args := []string{"tool", "pprof", "-top", "-nodecount=1000000"}
	if focus != "" {
		args = append(args, "-focus="+focus)
	}
	out, err := exec.CommandContext(ctx, "go", append(args, file)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("go tool pprof %s: %w: %s", file, err, out)
	}
	re := showing
	if focus == "" {
		re = total
	}
	m := re.FindSubmatch(out)
	if m == nil {
		if focus != "" {
			return 0, nil // no sample matched
		}
		return 0, fmt.Errorf("go tool pprof %s: no total in %q", file, out)
	}
	return seconds(string(m[1]), string(m[2])), nil
}

func seconds(v, unit string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	switch unit {
	case "ms":
		return f / 1000
	case "min":
		return f * 60
	}
	return f
}
