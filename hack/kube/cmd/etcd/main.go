// Command etcd is the local cluster's etcd for kube-apiserver: etcd's own
// server (go.etcd.io/etcd/server/v3/embed) at the version k8s.io/apiserver is
// built and tested against, configured by an etcd YAML config file
// (--config-file, the format of `etcd --config-file`). It stops cleanly on
// SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	configFile := flag.String("config-file", "", "etcd YAML configuration file")
	flag.Parse()
	if err := run(*configFile); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run(configFile string) error {
	if configFile == "" {
		return fmt.Errorf("--config-file is required")
	}
	cfg, err := embed.ConfigFromFile(configFile)
	if err != nil {
		return fmt.Errorf("read %s: %w", configFile, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return fmt.Errorf("not ready after 60s")
	case <-ctx.Done():
		return nil
	}
	select {
	case err := <-e.Err():
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		return nil
	}
}
