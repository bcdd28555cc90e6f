package startup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"kubevirt.dev/virt/bench/namespace"
	"kubevirt.dev/virt/launcher/layout"
)

// Namespace holds the part's VMIs.
const Namespace = "bench-start"

// Options bound the part.
type Options struct {
	// Counts are the batch sizes, each started at once.
	Counts []int
	// Timeout bounds one batch, start to the last marker.
	Timeout time.Duration
	Guest   Guest
}

// Run measures every batch size on the platform, then raw, one after the
// other so they never compete for the CPU. Its VMIs are deleted whatever
// happens.
func Run(ctx context.Context, env Env, o Options) (res *Result, err error) {
	res = &Result{}
	if err := namespace.Create(ctx, env.Kube, Namespace); err != nil {
		return nil, err
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() {
		if cerr := DeleteAll(cleanup, env, Namespace, 5*time.Minute); cerr != nil {
			err = errors.Join(err, cerr)
		}
		if cerr := namespace.Delete(cleanup, env.Kube, 2*time.Minute, Namespace); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	res.Notes = append(res.Notes, fmt.Sprintf("launchers seed QEMU's capabilities from their image (%s, probed when the image was built; docs/launcher.md)",
		layout.CapabilitiesSeedDir))
	raw, err := OpenRaw(ctx, o.Guest, o.Timeout, env.Logf)
	if err != nil {
		return res, err
	}
	defer raw.Close()
	for _, n := range o.Counts {
		env.Logf("start: platform, %d VMIs at once", n)
		r, err := PlatformBatch(ctx, env, Namespace, n, o.Timeout)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, r)
		env.Logf("start: platform %2d: Running p50 %s p95 %s, marker p50 %s p95 %s, %d failed, batch %s",
			n, r.RunningP50.Round(time.Millisecond), r.RunningP95.Round(time.Millisecond), r.MarkerP50.Round(time.Millisecond),
			r.MarkerP95.Round(time.Millisecond), r.Failed, r.Batch.Round(time.Millisecond))
		if err := DeleteAll(ctx, env, Namespace, 5*time.Minute); err != nil {
			return res, err
		}
		env.Logf("start: raw libvirt, %d domains at once", n)
		r, err = raw.Batch(ctx, n, o.Timeout, env.Logf)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, r)
		env.Logf("start: raw      %2d: running p50 %s p95 %s, marker p50 %s p95 %s, %d failed, batch %s",
			n, r.RunningP50.Round(time.Millisecond), r.RunningP95.Round(time.Millisecond), r.MarkerP50.Round(time.Millisecond),
			r.MarkerP95.Round(time.Millisecond), r.Failed, r.Batch.Round(time.Millisecond))
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	return res, nil
}
