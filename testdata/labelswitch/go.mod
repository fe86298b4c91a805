module ctxprof.test/labelswitch

go 1.17
