// Empty: the module only declares libFuzzer's driver (see include/CFuzzDriver.h).
