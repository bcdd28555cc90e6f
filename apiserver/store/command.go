package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kubevirt.dev/virt/apiserver/etcd"
)

// NewCommand is `virt-apiserver store`: backup and restore from an
// operator's machine, and the steps they run inside the store's pod.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Back up and restore the platform's store (docs/cluster.md \"Backup and restore\")",
	}
	var kubeconfig string
	var etcdTLS EtcdTLS
	connect := func() (*cluster, error) {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = kubeconfig
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, err
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return &cluster{config: cfg, kube: kube}, nil
	}

	var dir string
	backup := &cobra.Command{
		Use:   "backup [FILE]",
		Short: "Snapshot the store, either mode, into FILE (default DIR/<UTC time>.db) and FILE.json; prints FILE",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target := filepath.Join(dir, time.Now().UTC().Format("20060102T150405Z")+".db")
			if len(args) == 1 {
				target = args[0]
			}
			target, err := filepath.Abs(target)
			if err != nil {
				return err
			}
			c, err := connect()
			if err != nil {
				return err
			}
			m, err := c.Backup(cmd.Context(), target, etcdTLS)
			if err != nil {
				return err
			}
			var counts []string
			for r, n := range m.Keys {
				counts = append(counts, fmt.Sprintf("%d %s", n, r[strings.LastIndex(r, "/")+1:]))
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "backup of the %s store: revision %d, %d keys (%s), %d KiB\n",
				m.Mode, m.Revision, m.TotalKeys, strings.Join(counts, ", "), m.Size/1024)
			fmt.Fprintln(cmd.OutOrStdout(), target)
			return nil
		},
	}
	backup.Flags().StringVar(&dir, "dir", ".", "Directory of a backup whose FILE is not given.")
	backup.Flags().StringVar(&etcdTLS.CAFile, "etcd-cafile", "", "HA mode: the etcd cluster's CA.")
	backup.Flags().StringVar(&etcdTLS.CertFile, "etcd-certfile", "", "HA mode: the operator's etcd client certificate.")
	backup.Flags().StringVar(&etcdTLS.KeyFile, "etcd-keyfile", "", "HA mode: its key.")

	var yes bool
	restore := &cobra.Command{
		Use:   "restore FILE",
		Short: "Put the backup FILE back as the store: every object goes back to its time",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if !yes && isTerminal(os.Stdin) {
				fmt.Fprintf(cmd.ErrOrStderr(), "This replaces the platform's whole store with %s:\nevery VM, VMI and other object of virtualization.kubevirt.io goes back to that time;\nvirt-apiserver is down meanwhile. The old data is kept, never deleted.\nType yes to restore: ", file)
				answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
				if strings.TrimSpace(answer) != "yes" {
					return fmt.Errorf("nothing done")
				}
			}
			c, err := connect()
			if err != nil {
				return err
			}
			r, err := c.Restore(cmd.Context(), file)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "restore done: the API was unavailable for %s\n", r.Unavailable.Round(100*time.Millisecond))
			r.Print(cmd.OutOrStdout(), file)
			return nil
		},
	}
	restore.Flags().BoolVar(&yes, "yes", false, "Do not ask before replacing the store.")

	var carryFile string
	carryOut := &cobra.Command{
		Use:   "carry-out",
		Short: "A mode switch's first step: stop virt-apiserver and snapshot its store into --file; prints the snapshot's sha256",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := connect()
			if err != nil {
				return err
			}
			m, err := c.CarryOut(cmd.Context(), carryFile, etcdTLS)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "carrying the %s store: revision %d, %d keys\n", m.Mode, m.Revision, m.TotalKeys)
			fmt.Fprintln(cmd.OutOrStdout(), m.SHA256)
			return nil
		},
	}
	carryIn := &cobra.Command{
		Use:   "carry-in",
		Short: "A mode switch's last step: hand --file to the new mode's store, which waits for it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := connect()
			if err != nil {
				return err
			}
			return c.CarryIn(cmd.Context(), carryFile)
		},
	}
	for _, c := range []*cobra.Command{carryOut, carryIn} {
		c.Flags().StringVar(&carryFile, "file", "", "The snapshot carried.")
		_ = c.MarkFlagRequired("file")
	}
	carryOut.Flags().AddFlagSet(backup.Flags())

	for _, c := range []*cobra.Command{backup, restore, carryOut, carryIn} {
		c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "The cluster's kubeconfig (default: KUBECONFIG, ~/.kube/config).")
		cmd.AddCommand(c)
	}

	// The steps inside the store's pod.
	var restoreDir, sha string
	stage := &cobra.Command{
		Use:    "stage",
		Short:  "Inside the store's pod: stage the snapshot read from stdin for the embedded etcd's next start",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Stage(cmd.InOrStdin(), restoreDir, sha)
		},
	}
	stage.Flags().StringVar(&sha, "sha256", "", "The snapshot's sha256; another is refused.")
	result := &cobra.Command{
		Use:    "result",
		Short:  "Inside the store's pod: print what the embedded etcd did with the last staged snapshot",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := etcd.LastRestore(restoreDir)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
		},
	}
	var member etcd.MemberRestore
	memberInit := &cobra.Command{
		Use:    "member-init",
		Short:  "The HA members' init step: start from the snapshot of --await-snapshot, staged by virt-apiserver store carry-in",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return etcd.RestoreMember(cmd.Context(), member)
		},
	}
	memberInit.Flags().StringVar(&member.Name, "name", "", "The member's name (its pod's).")
	memberInit.Flags().StringVar(&member.DataDir, "data-dir", memberDataDir, "The member's etcd --data-dir.")
	memberInit.Flags().StringVar(&member.RestoreDir, "restore-dir", memberRestoreDir, "Where the snapshot is staged.")
	memberInit.Flags().StringVar(&member.AwaitSnapshot, "await-snapshot", os.Getenv(AwaitSnapshotEnv), "The sha256 of the snapshot to start from; empty: start as it is. Default: $"+AwaitSnapshotEnv+".")
	cmd.AddCommand(memberInit)

	for _, c := range []*cobra.Command{stage, result} {
		c.Flags().StringVar(&restoreDir, "restore-dir", filepath.Join(defaultDataDir, "restore"), "Where the embedded etcd finds a staged snapshot (<--data-dir>/restore).")
		cmd.AddCommand(c)
	}
	return cmd
}

// isTerminal tells a person at a terminal from a script (whose stdin may
// be /dev/null, a character device too).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
