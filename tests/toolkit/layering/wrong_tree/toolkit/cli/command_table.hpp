// A header of cli.
#pragma once
