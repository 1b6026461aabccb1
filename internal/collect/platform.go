package collect

// MaxPlatformParamLen bounds one kept link parameter.
const MaxPlatformParamLen = 200
