package settings

// The registries whose names the settings validate and document, linked
// as the seedance binary links them (cmd).
import (
	_ "github.com/seedance/seedance/recommend"
	_ "github.com/seedance/seedance/render"
	_ "github.com/seedance/seedance/source/gpu"
	_ "github.com/seedance/seedance/source/prometheus"
	_ "github.com/seedance/seedance/source/scrape"
	_ "github.com/seedance/seedance/source/sim"
)
