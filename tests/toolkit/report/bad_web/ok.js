var ok = 1;
