package storequota

import (
	"context"
	"fmt"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/klog/v2"
)

// DefaultThreshold is the share of the quota at which Assess warns.
const DefaultThreshold = 0.8

// Member is one etcd endpoint's answer to Status.
type Member struct {
	Endpoint string
	// DBSize is the database file's size, which the quota limits.
	DBSize int64
	// DBSizeInUse is what the live data needs of it; a defragmentation
	// gives the rest back.
	DBSizeInUse int64
	// Err: the member did not answer.
	Err error
}

// Level is how close the store is to refusing writes.
type Level int

const (
	// OK: every member that answered is below the threshold.
	OK Level = iota
	// NearQuota: a member's database reached the threshold.
	NearQuota
	// NoSpace: etcd's NOSPACE alarm is raised; writes are refused.
	NoSpace
)

func (l Level) String() string {
	switch l {
	case OK:
		return "OK"
	case NearQuota:
		return "NearQuota"
	case NoSpace:
		return "NoSpace"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Report is an assessment of the store.
type Report struct {
	Level Level
	// Largest is the member with the largest database file.
	Largest Member
	Quota   int64
	// Unanswered counts members whose Status failed.
	Unanswered int
}

// Assess rates the members' database sizes against quota: NoSpace when the
// alarm is raised, NearQuota when a member's file reached threshold (a
// share, e.g. DefaultThreshold) of quota, OK otherwise. A quota of 0 or less
// means unknown: only the alarm counts.
func Assess(members []Member, noSpaceAlarm bool, quota int64, threshold float64) Report {
	r := Report{Quota: quota}
	for _, m := range members {
		if m.Err != nil {
			r.Unanswered++
			continue
		}
		if m.DBSize >= r.Largest.DBSize {
			r.Largest = m
		}
	}
	switch {
	case noSpaceAlarm:
		r.Level = NoSpace
	case quota > 0 && r.Largest.Endpoint != "" && float64(r.Largest.DBSize) >= threshold*float64(quota):
		r.Level = NearQuota
	}
	return r
}

// Message says what the report means and what to do.
func (r Report) Message() string {
	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	size := fmt.Sprintf("the largest database (%s) is %s of the %s quota, %s of it in use",
		r.Largest.Endpoint, mib(r.Largest.DBSize), mib(r.Quota), mib(r.Largest.DBSizeInUse))
	if r.Largest.Endpoint == "" {
		size = "no member answered Status"
	}
	// Free pages beyond a quarter of the file: a defragmentation helps.
	fragmented := r.Largest.DBSize > 0 && r.Largest.DBSize-r.Largest.DBSizeInUse > r.Largest.DBSize/4
	cure := "the data itself grew: delete what is not needed, or raise --quota-backend-bytes and the volume"
	if fragmented {
		cure = "a defragmentation gives the free pages back"
	}
	switch r.Level {
	case NoSpace:
		return fmt.Sprintf("etcd's NOSPACE alarm is raised: every write is refused until it is disarmed (docs/runbooks.md \"The store is full\"); %s; %s", size, cure)
	case NearQuota:
		return fmt.Sprintf("The store nears its quota: %s; at 100%% etcd refuses every write (docs/runbooks.md \"The store is full\"); %s", size, cure)
	}
	return "The store is below its quota again: " + size
}

// Watcher polls an etcd cluster and reports how close it is to its quota.
type Watcher struct {
	Client *clientv3.Client
	// Quota is the members' --quota-backend-bytes.
	Quota     int64
	Threshold float64
	Interval  time.Duration
	// Repeat is how often a report that is not OK is emitted again.
	Repeat time.Duration
	// Emit receives each report whose level differs from the last one
	// emitted, and the same again after Repeat while it is not OK.
	Emit func(context.Context, Report)
}

// Run polls until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	last, lastAt := OK, time.Time{}
	tick := time.NewTicker(w.Interval)
	defer tick.Stop()
	for {
		r, err := w.poll(ctx)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Store quota check failed", "err", err)
		} else if r.Level != last || (r.Level != OK && time.Since(lastAt) >= w.Repeat) {
			w.Emit(ctx, r)
			last, lastAt = r.Level, time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *Watcher) poll(ctx context.Context) (Report, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	alarms, err := w.Client.AlarmList(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("list alarms: %w", err)
	}
	noSpace := false
	for _, a := range alarms.Alarms {
		noSpace = noSpace || a.Alarm == pb.AlarmType_NOSPACE
	}
	var members []Member
	for _, ep := range w.Client.Endpoints() {
		st, err := w.Client.Status(ctx, ep)
		if err != nil {
			members = append(members, Member{Endpoint: ep, Err: err})
			continue
		}
		members = append(members, Member{Endpoint: ep, DBSize: st.DbSize, DBSizeInUse: st.DbSizeInUse})
	}
	threshold := w.Threshold
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	return Assess(members, noSpace, w.Quota, threshold), nil
}
