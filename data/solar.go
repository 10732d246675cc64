package data

import (
	"math"
	"time"
)

// Solar geometry and irradiance for the PV simulator. Angles are in degrees
// at the API, radians inside.

const deg = math.Pi / 180

// SolarPosition is the Sun's position seen from a site.
type SolarPosition struct {
	Zenith    float64 // apparent zenith angle (refraction included), degrees
	Azimuth   float64 // degrees clockwise from north
	Elevation float64 // 90 − Zenith
	// Declination and EquationOfTime (minutes) of the NOAA algorithm.
	Declination, EquationOfTime float64
}

// SunPosition computes the Sun's position at instant t (any time zone) for a
// site at latitude lat and longitude lon (degrees, east positive) with the
// NOAA solar calculator's algorithm (after Meeus, Astronomical Algorithms:
// accurate to about 0.01° between 1800 and 2100), and the atmospheric
// refraction of NREL's SPA (Reda & Andreas 2004, eq. 42) for pressure p (hPa)
// and temperature temp (°C). TestSunPositionSPAReference checks it against
// the reference values published with the SPA.
func SunPosition(t time.Time, lat, lon, p, temp float64) SolarPosition {
	jd := float64(t.UnixNano())/86400e9 + 2440587.5
	T := (jd - 2451545) / 36525
	l0 := math.Mod(280.46646+T*(36000.76983+T*0.0003032), 360)
	m := 357.52911 + T*(35999.05029-0.0001537*T)
	e := 0.016708634 - T*(0.000042037+0.0000001267*T)
	c := math.Sin(m*deg)*(1.914602-T*(0.004817+0.000014*T)) + math.Sin(2*m*deg)*(0.019993-0.000101*T) +
		math.Sin(3*m*deg)*0.000289
	trueLong := l0 + c
	omega := 125.04 - 1934.136*T
	appLong := trueLong - 0.00569 - 0.00478*math.Sin(omega*deg)
	eps0 := 23 + (26+(21.448-T*(46.815+T*(0.00059-T*0.001813)))/60)/60
	eps := eps0 + 0.00256*math.Cos(omega*deg)
	decl := math.Asin(math.Sin(eps*deg)*math.Sin(appLong*deg)) / deg
	y := math.Tan(eps * deg / 2)
	y *= y
	l0r, mr := l0*deg, m*deg
	eot := 4 / deg * (y*math.Sin(2*l0r) - 2*e*math.Sin(mr) + 4*e*y*math.Sin(mr)*math.Cos(2*l0r) -
		0.5*y*y*math.Sin(4*l0r) - 1.25*e*e*math.Sin(2*mr))
	u := t.UTC()
	minutes := float64(u.Hour()*60+u.Minute()) + (float64(u.Second())+float64(u.Nanosecond())/1e9)/60
	tst := math.Mod(minutes+eot+4*lon, 1440)
	if tst < 0 {
		tst += 1440
	}
	ha := tst/4 - 180 // hour angle, degrees
	cosZ := math.Sin(lat*deg)*math.Sin(decl*deg) + math.Cos(lat*deg)*math.Cos(decl*deg)*math.Cos(ha*deg)
	cosZ = math.Max(-1, math.Min(1, cosZ))
	zen := math.Acos(cosZ) / deg
	// Azimuth from north, clockwise (atan2 form, well defined at all angles).
	az := math.Atan2(math.Sin(ha*deg), math.Cos(ha*deg)*math.Sin(lat*deg)-math.Tan(decl*deg)*math.Cos(lat*deg))/deg +
		180
	el := 90 - zen
	// SPA refraction, applied while the Sun is above −(0.26667 + 0.5667)°.
	if el >= -0.8333 {
		el += p / 1010 * 283 / (273 + temp) * 1.02 / (60 * math.Tan((el+10.3/(el+5.11))*deg))
	}
	return SolarPosition{Zenith: 90 - el, Azimuth: math.Mod(az, 360), Elevation: el, Declination: decl,
		EquationOfTime: eot}
}

// ExtraterrestrialNormal is the normal irradiance at the top of the
// atmosphere on day of year doy (W/m², Spencer's simple form).
func ExtraterrestrialNormal(doy int) float64 {
	return 1367 * (1 + 0.033*math.Cos(2*math.Pi*float64(doy)/365))
}

// ClearSkyGHI is the Haurwitz clear-sky global horizontal irradiance (W/m²)
// at zenith angle z (degrees); 0 with the Sun below the horizon.
func ClearSkyGHI(z float64) float64 {
	c := math.Cos(z * deg)
	if c <= 0 {
		return 0
	}
	return 1098 * c * math.Exp(-0.057/c)
}

// ErbsSplit splits global horizontal irradiance into direct normal (beam)
// and diffuse horizontal with the Erbs et al. (1982) diffuse-fraction
// correlation of the clearness index kt = GHI/(E0n·cos z). Near the horizon
// (cos z < 0.05) everything is diffuse.
func ErbsSplit(ghi, z float64, doy int) (dni, dhi float64) {
	c := math.Cos(z * deg)
	if ghi <= 0 {
		return 0, 0
	}
	if c < 0.05 {
		return 0, ghi
	}
	kt := math.Min(ghi/(ExtraterrestrialNormal(doy)*c), 1)
	var kd float64
	switch {
	case kt <= 0.22:
		kd = 1 - 0.09*kt
	case kt <= 0.8:
		kd = 0.9511 + kt*(-0.1604+kt*(4.388+kt*(-16.638+kt*12.336)))
	default:
		kd = 0.165
	}
	dhi = kd * ghi
	return (ghi - dhi) / c, dhi
}

// CloudAttenuation is the Kasten–Czeplak (1980) ratio of global irradiance
// under a cloud cover fraction c ∈ [0, 1] to the clear-sky value.
func CloudAttenuation(c float64) float64 {
	return 1 - 0.75*math.Pow(math.Max(0, math.Min(1, c)), 3.4)
}

// AngleOfIncidence is the angle (degrees) between the Sun and the normal of
// a plane of the given tilt and azimuth (degrees from north).
func AngleOfIncidence(sun SolarPosition, tilt, azimuth float64) float64 {
	z, a := sun.Zenith*deg, sun.Azimuth*deg
	c := math.Cos(z)*math.Cos(tilt*deg) + math.Sin(z)*math.Sin(tilt*deg)*math.Cos(a-azimuth*deg)
	return math.Acos(math.Max(-1, math.Min(1, c))) / deg
}

// PlaneOfArray is the irradiance on a tilted plane (W/m²): the beam through
// the angle of incidence (blocked if beamBlocked), isotropic sky diffuse
// (Liu–Jordan) and ground-reflected light with albedo 0.2.
func PlaneOfArray(sun SolarPosition, tilt, azimuth, dni, dhi, ghi float64, beamBlocked bool) float64 {
	beam := 0.0
	if !beamBlocked && sun.Elevation > 0 {
		beam = dni * math.Max(0, math.Cos(AngleOfIncidence(sun, tilt, azimuth)*deg))
	}
	ct := math.Cos(tilt * deg)
	return beam + dhi*(1+ct)/2 + 0.2*ghi*(1-ct)/2
}
