package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/coord"
)

// etcdAccess is [coord]'s TLS and user, as every verb that reads etcd
// dials it.
func etcdAccess(cfg *config.Config) coord.Access {
	k := cfg.Coord
	return coord.Access{CAFile: k.CAFile, CertFile: k.CertFile, KeyFile: k.KeyFile, User: k.User, Password: k.EtcdPassword()}
}

// etcdAccepts is nil unless etcd refuses this engine's certificate,
// login or role: a refusal is named at once (an etcd that does not answer
// is waited for by whoever dials it, as before).
func etcdAccepts(ctx context.Context, cfg *config.Config) error {
	err := coord.CheckAccess(ctx, cfg.Coord.Etcd, etcdAccess(cfg), cfg.Coord.Prefix)
	if err != nil && !errors.Is(err, coord.ErrNoAnswer) {
		return fmt.Errorf("coord: %w", err)
	}
	return nil
}

// etcdSecurity says in plain words what [coord] turns on, for the start
// log and `engine validate`.
func etcdSecurity(cfg *config.Config) string {
	k := cfg.Coord
	s := "plain"
	switch {
	case k.CertFile != "":
		s = "TLS, client certificate " + k.CertFile
	case k.CAFile != "" || hasHTTPS(k.Etcd):
		s = "TLS, no client certificate"
	}
	if k.User != "" {
		return s + ", user " + k.User
	}
	return s + ", no user"
}

func hasHTTPS(urls []string) bool {
	for _, u := range urls {
		if len(u) > 8 && u[:8] == "https://" {
			return true
		}
	}
	return false
}

// checkEtcd is `engine validate`'s etcd check: what [coord] turns on, and
// that etcd accepts it (the TLS handshake, the login, a read of the
// prefix).
func checkEtcd(ctx context.Context, cfg *config.Config, v validation) {
	k := cfg.Coord
	if len(k.Etcd) == 0 {
		return
	}
	if err := coord.CheckAccess(ctx, k.Etcd, etcdAccess(cfg), k.Prefix); err != nil {
		v.problem("coord: %v", err)
		return
	}
	v.ok("etcd %s (%s): read %s", strings.Join(k.Etcd, ", "), etcdSecurity(cfg), k.Prefix)
}
