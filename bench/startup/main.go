// Command startup measures `vetlens predict` as a clinic machine runs it:
// process start to first prediction (wall time of the whole process) and
// the process's peak resident memory, over several runs.
//
//	go build -o vetlens . && go run ./bench/startup --bin ./vetlens --runs 7 IMAGE
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "./vetlens", "vetlens binary")
	runs := flag.Int("runs", 7, "number of runs")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: startup [--bin PATH] [--runs N] IMAGE")
		os.Exit(2)
	}
	var walls []time.Duration
	var peak int64
	for i := 0; i < *runs; i++ {
		cmd := exec.Command(*bin, "predict", flag.Arg(0))
		cmd.Stderr = os.Stderr
		t0 := time.Now()
		out, err := cmd.Output()
		wall := time.Since(t0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "startup: run %d: %v\n%s", i, err, out)
			os.Exit(1)
		}
		walls = append(walls, wall)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peak {
			peak = ru.Maxrss // KiB on Linux
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	fmt.Printf("runs %d  start-to-first-prediction median %v  min %v  max %v  peak RSS %.1f MB\n",
		len(walls), walls[len(walls)/2].Round(time.Millisecond), walls[0].Round(time.Millisecond),
		walls[len(walls)-1].Round(time.Millisecond), float64(peak)/1024)
}
