"""Independent XLS reader for the differential tests: python3-xlrd 1.2 (Debian) counts each workbook given.

Usage: xlrd_counts.py [--formatting] FILE...  Prints {path: counts} as JSON, counts per workbook:
cells holding something (numbers, text, formulas, booleans, errors; not empty or blank ones), rows
holding such cells, and the printed area: for each sheet, rows x columns from A1 to the farthest
such cell (with --formatting also blank formatted cells and merged ranges), summed, plus each
Print_Area range from A1 to its far corner (xlrd's evaluation of the built-in name); sharedStrings:
the SST's unique strings. {"error": text} when xlrd cannot read the file.
"""
import json
import sys

import xlrd
import xlrd.book

formatting = "--formatting" in sys.argv
files = [a for a in sys.argv[1:] if a != "--formatting"]

unique_strings = []
original_handle_sst = xlrd.book.Book.handle_sst


def handle_sst(self, data):
    original_handle_sst(self, data)
    unique_strings.append(len(self._sharedstrings))


xlrd.book.Book.handle_sst = handle_sst

result = {}
for path in files:
    unique_strings.clear()
    try:
        book = xlrd.open_workbook(path, formatting_info=formatting, ragged_rows=True, logfile=sys.stderr)
        cells = rows = area = 0
        for sheet in book.sheets():
            last_row = last_col = 0
            for r in range(sheet.nrows):
                holding = 0
                for c, kind in enumerate(sheet.row_types(r)):
                    if kind == xlrd.XL_CELL_EMPTY:
                        continue
                    last_row, last_col = max(last_row, r + 1), max(last_col, c + 1)
                    if kind != xlrd.XL_CELL_BLANK:
                        holding += 1
                cells += holding
                rows += 1 if holding else 0
            for rlo, rhi, clo, chi in sheet.merged_cells:
                last_row, last_col = max(last_row, rhi), max(last_col, chi)
            area += last_row * last_col
        # Print areas, each range from A1 to its far corner (as the XLSX count reads _xlnm.Print_Area).
        for name in book.name_obj_list:
            if name.builtin and name.name == "Print_Area" and name.result is not None:
                for ref in name.result.value:
                    _, _, _, row_hi, _, col_hi = ref.coords
                    area += row_hi * col_hi
        result[path] = {"cells": cells, "rows": rows, "area": area, "sharedStrings": sum(unique_strings)}
    except Exception as exc:
        result[path] = {"error": f"{type(exc).__name__}: {exc}"}
json.dump(result, sys.stdout)
