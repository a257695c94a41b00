// Command soak runs the engine through a long randomized history of world
// events and faults against the fake Placement, checks every invariant
// after every cycle, and writes a short report (reports/SOAK.md). It exits 1 on
// any violation. See internal/testing/soak for what is checked.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rpengine/rpengine/internal/testing/soak"
)

func main() {
	cfg := soak.Config{Progress: os.Stderr}
	flag.Uint64Var(&cfg.Seed, "seed", uint64(time.Now().UnixNano()%1_000_000), "seed of the history (printed; reuse it to replay)")
	flag.IntVar(&cfg.Cycles, "cycles", 10000, "cycles to run")
	flag.IntVar(&cfg.Nodes, "nodes", 1000, "nodes in the world at the start")
	flag.DurationVar(&cfg.MaxDuration, "max-duration", 15*time.Minute, "stop after this long (the report says so)")
	flag.StringVar(&cfg.Mode, "mode", soak.ModeMemory, "memory (in-memory source) or wasm (the fake plugin in Wasm)")
	flag.StringVar(&cfg.Plugin, "plugin", "build/plugins/fake.wasm", "the fake plugin, for -mode wasm")
	flag.DurationVar(&cfg.ClientTimeout, "client-timeout", 250*time.Millisecond, "Placement client time limit per request")
	flag.IntVar(&cfg.ProgressEvery, "progress", 500, "print progress every this many cycles")
	flag.StringVar(&cfg.Trace, "trace", "", "a node uuid whose history to print (to investigate a violation)")
	out := flag.String("out", "reports/SOAK.md", "report file (\"-\": stdout only)")
	flag.Parse()

	fmt.Fprintf(os.Stderr, "soak: seed %d, %d cycles, %d nodes, mode %s\n", cfg.Seed, cfg.Cycles, cfg.Nodes, cfg.Mode)
	rep, err := soak.Run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	rep.Markdown(os.Stdout)
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(2)
		}
		rep.Markdown(f)
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(2)
		}
	}
	fmt.Fprintf(os.Stderr, "soak: seed %d, %d cycles in %v, %d violations\n",
		rep.Seed, rep.Cycles, rep.Duration.Round(time.Second), rep.ViolationCount)
	if rep.ViolationCount > 0 {
		os.Exit(1)
	}
}
