package main

import (
	_ "embed"
	"fmt"
	"os"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"vetlens/assets"
	"vetlens/cli"
)

// fyneAppTOML is FyneApp.toml: the app ID, name, version and icon, the
// one place they are written. It must sit beside main (the fyne tool
// reads it there), so main embeds it.
//
//go:embed FyneApp.toml
var fyneAppTOML []byte

// appMetadata is the metadata set at start.
var appMetadata fyne.AppMetadata

// init gives the app its metadata from FyneApp.toml, so a plain go build
// has the same app ID (preferences, storage) and icon as a packaged one.
// `fyne package` adds fyne_metadata_init.go, whose init runs after this
// one (files initialise in name order) and sets the same values with its
// build number and release flag.
func init() {
	m, err := assets.Metadata(fyneAppTOML)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vetlens: %v\n", err)
		os.Exit(cli.ExitInternal)
	}
	appMetadata = m
	fyneapp.SetMetadata(m)
}
