// Command maintenance puts the first host of the first cluster of the
// vCenter at the URL given (with user and password) into maintenance
// mode, for scripts/vcsim/demo.sh. It is a demo helper, never part of the
// engine.
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "maintenance:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: maintenance http://user:password@host:port/sdk")
	}
	u, err := url.Parse(os.Args[1])
	if err != nil {
		return err
	}
	ctx := context.Background()
	c, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		return err
	}
	defer c.Logout(ctx)
	f := find.NewFinder(c.Client, true)
	dc, err := f.DefaultDatacenter(ctx)
	if err != nil {
		return err
	}
	f.SetDatacenter(dc)
	hosts, err := f.HostSystemList(ctx, "*/*")
	if err != nil {
		return err
	}
	task, err := hosts[0].EnterMaintenanceMode(ctx, 0, false, nil)
	if err != nil {
		return err
	}
	fmt.Println("host", hosts[0].InventoryPath, "enters maintenance")
	return task.Wait(ctx)
}
