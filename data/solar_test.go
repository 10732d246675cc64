package data

import (
	"math"
	"testing"
	"time"
)

// TestSunPositionSPAReference checks SunPosition against the example
// published with NREL's SPA (Reda & Andreas 2004, Table A4.1): Golden,
// Colorado, 17 October 2003, 12:30:30 local time (UTC−7), 820 hPa, 11 °C:
// topocentric zenith 50.11162°, azimuth 194.34024°, equation of time
// 14.641503 min, geocentric declination −9.31434°. The NOAA algorithm is
// stated accurate to about 0.01°; SPA's parallax (≤ 0.0024°) is ignored.
func TestSunPositionSPAReference(t *testing.T) {
	at := time.Date(2003, 10, 17, 12, 30, 30, 0, time.FixedZone("MST", -7*3600))
	p := SunPosition(at, 39.742476, -105.1786, 820, 11)
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"zenith", p.Zenith, 50.11162, 0.01},
		{"azimuth", p.Azimuth, 194.34024, 0.01},
		{"equation of time (min)", p.EquationOfTime, 14.641503, 0.02},
		{"declination", p.Declination, -9.31434, 0.005},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %.5f, SPA reference %.5f (tolerance %g)", c.name, c.got, c.want, c.tol)
		}
	}
}

// TestSunPositionLausanneSolstice: at the June solstice the noon elevation
// at 46.52° N is 90 − 46.52 + 23.44 = 66.92°, reached near 11:35 UTC
// (12:00 − 4 min/° × 6.63° + 1.7 min equation of time), due south.
func TestSunPositionLausanneSolstice(t *testing.T) {
	best := SolarPosition{Elevation: -90}
	var bestAt time.Time
	for m := 0; m < 24*60; m++ {
		at := time.Date(2018, 6, 21, 0, m, 0, 0, time.UTC)
		if p := SunPosition(at, 46.52, 6.63, 1013, 15); p.Elevation > best.Elevation {
			best, bestAt = p, at
		}
	}
	if math.Abs(best.Elevation-66.93) > 0.05 || math.Abs(best.Azimuth-180) > 1 {
		t.Errorf("solstice noon: elevation %.3f° azimuth %.2f°, want about 66.93° and 180°", best.Elevation,
			best.Azimuth)
	}
	if h, m := bestAt.Hour(), bestAt.Minute(); h != 11 || m < 33 || m > 37 {
		t.Errorf("solar noon at %02d:%02d UTC, want about 11:35", h, m)
	}
	// Morning sun in the east, evening sun in the west.
	if p := SunPosition(time.Date(2018, 6, 21, 6, 0, 0, 0, time.UTC), 46.52, 6.63, 1013, 15); p.Azimuth < 60 ||
		p.Azimuth > 110 {
		t.Errorf("06:00 UTC azimuth %.1f°, want east", p.Azimuth)
	}
	if p := SunPosition(time.Date(2018, 6, 21, 17, 0, 0, 0, time.UTC), 46.52, 6.63, 1013, 15); p.Azimuth < 250 ||
		p.Azimuth > 300 {
		t.Errorf("17:00 UTC azimuth %.1f°, want west", p.Azimuth)
	}
}

func TestIrradianceModels(t *testing.T) {
	// Haurwitz at zenith 0: 1098·e^{−0.057} = 1037.2 W/m².
	if g := ClearSkyGHI(0); math.Abs(g-1037.16) > 0.1 {
		t.Errorf("clear-sky GHI at zenith 0 = %v", g)
	}
	if ClearSkyGHI(91) != 0 {
		t.Error("irradiance with the Sun below the horizon")
	}
	// The split conserves GHI = DNI·cos z + DHI, and a clear sky is mostly beam.
	for _, z := range []float64{10, 40, 70, 85} {
		g := ClearSkyGHI(z)
		dni, dhi := ErbsSplit(g, z, 172)
		if math.Abs(dni*math.Cos(z*deg)+dhi-g) > 1e-9*g || dni < 0 || dhi < 0 {
			t.Errorf("z=%v: GHI %v split into DNI %v DHI %v", z, g, dni, dhi)
		}
		if z < 60 && dhi > 0.3*g {
			t.Errorf("z=%v: clear sky with diffuse fraction %.2f", z, dhi/g)
		}
	}
	// Overcast: kt small → nearly all diffuse.
	if dni, dhi := ErbsSplit(0.15*ClearSkyGHI(40), 40, 172); dni > 0.05*dhi {
		t.Errorf("overcast split DNI %v DHI %v", dni, dhi)
	}
	if CloudAttenuation(0) != 1 || math.Abs(CloudAttenuation(1)-0.25) > 1e-12 {
		t.Error("Kasten–Czeplak end points")
	}
	// A plane facing the Sun squarely gets the full beam.
	sun := SolarPosition{Zenith: 30, Azimuth: 180, Elevation: 60}
	if aoi := AngleOfIncidence(sun, 30, 180); math.Abs(aoi) > 1e-6 {
		t.Errorf("angle of incidence %v, want 0", aoi)
	}
	if poa := PlaneOfArray(sun, 0, 180, 800, 100, 800*math.Cos(30*deg)+100, false); math.Abs(
		poa-(800*math.Cos(30*deg)+100)) > 1e-9 {
		t.Errorf("horizontal plane POA %v, want GHI", poa)
	}
}
