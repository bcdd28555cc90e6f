package reliability

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"

	"kubevirt.dev/virt/test/e2e/framework"
)

const (
	// etcdMembers is the HA mode's etcd cluster size (artifacts/etcd).
	etcdMembers = 3
	// etcdContainer is the member pods' container.
	etcdContainer = "etcd"
	// etcdTimeout bounds one request to the etcd cluster.
	etcdTimeout = 10 * time.Second
	// etcdPollInterval is how often each surviving member is asked for its
	// leader after the leader's kill: the resolution of the election time.
	etcdPollInterval = 100 * time.Millisecond
)

// etcdView is the etcd cluster as its members report it.
type etcdView struct {
	// pods are the members' pods by member ID.
	pods map[uint64]*corev1.Pod
	// leader is the member every member names leader, of Raft term term.
	leader, term uint64
}

func (v etcdView) name(id uint64) string {
	if p := v.pods[id]; p != nil {
		return p.Name
	}
	return fmt.Sprintf("member %x", id)
}

func (v etcdView) endpoint(id uint64) string {
	return "https://" + v.pods[id].Status.PodIP + ":2379"
}

// readEtcd asks every member for its status, as `etcdctl endpoint status`
// does (with the client certificate, through each pod's address): every
// member must answer and name the same leader.
func readEtcd(ctx context.Context) (etcdView, error) {
	v := etcdView{pods: map[uint64]*corev1.Pod{}}
	members, err := cluster.EtcdMembers(ctx)
	if err != nil {
		return v, err
	}
	endpoints := framework.EtcdEndpoints(members)
	if len(members) != etcdMembers || len(endpoints) != etcdMembers {
		return v, fmt.Errorf("%d etcd member pods, %d with an address, want %d", len(members), len(endpoints), etcdMembers)
	}
	cli, err := cluster.EtcdClient(endpoints...)
	if err != nil {
		return v, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	list, err := cli.MemberList(ctx)
	if err != nil {
		return v, fmt.Errorf("etcd member list: %w", err)
	}
	ids := map[string]uint64{}
	for _, m := range list.Members {
		ids[m.Name] = m.ID
	}
	for i := range members {
		p := &members[i]
		id, ok := ids[p.Name]
		if !ok {
			return v, fmt.Errorf("pod %s is no member of the etcd cluster", p.Name)
		}
		v.pods[id] = p
		st, err := cli.Status(ctx, v.endpoint(id))
		if err != nil {
			return v, fmt.Errorf("status of etcd member %s: %w", p.Name, err)
		}
		switch {
		case st.Leader == 0:
			return v, fmt.Errorf("etcd member %s has no leader", p.Name)
		case v.leader == 0:
			v.leader = st.Leader
		case st.Leader != v.leader:
			return v, fmt.Errorf("etcd members disagree on the leader: %x and %x", v.leader, st.Leader)
		}
		v.term = max(v.term, st.RaftTerm)
	}
	if v.pods[v.leader] == nil {
		return v, fmt.Errorf("the etcd leader %x is none of the member pods", v.leader)
	}
	return v, nil
}

// waitEtcdQuorum waits until every member's pod is Ready (etcd's /readyz:
// in a quorum with a leader) and the members agree on the leader.
func waitEtcdQuorum(ctx context.Context) (etcdView, error) {
	var v etcdView
	err := framework.WaitFor(ctx, componentTimeout, fmt.Sprintf("%d ready etcd members with one leader", etcdMembers), func(ctx context.Context) (bool, error) {
		var err error
		if v, err = readEtcd(ctx); err != nil {
			return false, err
		}
		for _, p := range v.pods {
			if ready := podCondition(p, corev1.PodReady); ready == nil || ready.Status != corev1.ConditionTrue {
				return false, fmt.Errorf("etcd member %s not Ready", p.Name)
			}
		}
		return true, nil
	})
	return v, err
}

// leaderChange is the first answer that named a new leader.
type leaderChange struct {
	at     time.Time
	leader string
	term   uint64
	// by is the member that answered.
	by  string
	err error
}

// leaderWatch asks the members that survive a kill for their leader.
type leaderWatch struct {
	view    etcdView
	clients map[uint64]*clientv3.Client
}

// newLeaderWatch connects to every member but killed.
func newLeaderWatch(view etcdView, killed uint64) (*leaderWatch, error) {
	w := &leaderWatch{view: view, clients: map[uint64]*clientv3.Client{}}
	for id := range view.pods {
		if id == killed {
			continue
		}
		cli, err := cluster.EtcdClient(view.endpoint(id))
		if err != nil {
			w.close()
			return nil, err
		}
		w.clients[id] = cli
	}
	return w, nil
}

func (w *leaderWatch) close() {
	for _, c := range w.clients {
		c.Close()
	}
}

// await asks each member every etcdPollInterval until one names a leader
// of a term after term, for at most timeout, and then closes the watch.
// The channel gets that answer, or the error of none.
func (w *leaderWatch) await(ctx context.Context, term uint64, timeout time.Duration) <-chan leaderChange {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	found := make(chan leaderChange, len(w.clients))
	var wg sync.WaitGroup
	for id, cli := range w.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(etcdPollInterval)
			defer tick.Stop()
			for {
				rctx, rcancel := context.WithTimeout(ctx, time.Second)
				st, err := cli.Status(rctx, w.view.endpoint(id))
				rcancel()
				if err == nil && st.Leader != 0 && st.RaftTerm > term {
					found <- leaderChange{at: time.Now(), leader: w.view.name(st.Leader), term: st.RaftTerm, by: w.view.name(id)}
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	out := make(chan leaderChange, 1)
	go func() {
		defer w.close()
		defer wg.Wait()
		defer cancel()
		select {
		case c := <-found:
			out <- c
		case <-ctx.Done():
			out <- leaderChange{err: fmt.Errorf("no surviving member named a leader of a term after %d within %s", term, timeout)}
		}
	}()
	return out
}
