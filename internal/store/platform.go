package store

// MaxPlatformParamLen bounds one kept link parameter.
const MaxPlatformParamLen = 200
