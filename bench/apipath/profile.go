package apipath

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/pprof/profile"

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
// breaks it into Buckets.
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
	total, shares, err := Shares(p.File)
	if err != nil {
		return p, err
	}
	p.CPUSeconds, p.Shares = total/float64(secs), shares
	return p, nil
}

// Shares breaks a saved CPU profile into Buckets; total is its CPU seconds.
// A sample counts in a bucket when one of its frames matches the bucket's
// regexp the way `go tool pprof -focus` matches (function name, file or
// mapped binary): profile.FilterSamplesByName is that filter.
func Shares(file string) (total float64, shares map[string]float64, err error) {
	p, err := readProfile(file)
	if err != nil {
		return 0, nil, err
	}
	// pprof's default: the profile's default sample type, else its last
	// (cpu/nanoseconds in a Go CPU profile).
	i, err := p.SampleIndexByName("")
	if err != nil {
		return 0, nil, fmt.Errorf("profile %s: %w", file, err)
	}
	unit := p.SampleType[i].Unit
	if unit != "nanoseconds" {
		return 0, nil, fmt.Errorf("profile %s: samples in %s, not a CPU profile", file, unit)
	}
	total = cpuSeconds(p.Sample, i)
	shares = map[string]float64{}
	if total == 0 {
		return 0, shares, nil
	}
	for _, b := range Buckets {
		focused := p.Copy()
		focused.FilterSamplesByName(regexp.MustCompile(b.Regexp), nil, nil, nil)
		shares[b.Name] = cpuSeconds(focused.Sample, i) / total
	}
	return total, shares, nil
}

func readProfile(file string) (*profile.Profile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("parse profile %s: %w", file, err)
	}
	return p, nil
}

// cpuSeconds sums the samples' value i, in nanoseconds.
func cpuSeconds(samples []*profile.Sample, i int) float64 {
	var ns int64
	for _, s := range samples {
		ns += s.Value[i]
	}
	return float64(ns) / float64(time.Second)
}
