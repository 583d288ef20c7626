;;; emacs_edit.el --- a batch editing session over a tree of C++ sources, for bench/traces
;;
;; Emacs allocates its Lisp objects, buffer text, text properties, undo lists and markers
;; with malloc; an editing session that opens many files, edits them (regexp search and
;; replace, indentation, font-lock, insertion and killing, undo), saves them and closes
;; most of them is the editor workload of the fragmentation studies.  Some buffers stay
;; open to the end, so the memory of the closed ones has to be reused around them.
;;
;; Run as:  emacs -Q --batch -l emacs_edit.el DIR [KEEP-EVERY [STRIDE]]
;; DIR is a scratch copy of sources (files are rewritten); every KEEP-EVERY-th buffer
;; (default 5) is left open; of the files in name order every STRIDE-th (default 1) is
;; edited, which sets the session's length (indenting C++ is slow).  Prints `emacs_edit files=N kept=K chars=C checksum=S'.

(require 'cc-mode)
(require 'font-lock)

(defvar edit-dir (expand-file-name (nth 0 command-line-args-left)))
(defvar edit-keep-every (string-to-number (or (nth 1 command-line-args-left) "5")))
(defvar edit-stride (string-to-number (or (nth 2 command-line-args-left) "1")))
(setq command-line-args-left nil)
(setq make-backup-files nil
      auto-save-default nil
      create-lockfiles nil
      font-lock-support-mode nil
      font-lock-maximum-size nil)

(defun edit-replace (from to)
  "Replace every match of regexp FROM with TO in the buffer; return the count."
  (let ((n 0))
    (goto-char (point-min))
    (while (re-search-forward from nil t)
      (replace-match to t)
      (setq n (1+ n)))
    n))

(defun edit-insert-and-kill ()
  "Insert a comment every 40 lines, then kill a few lines near the middle."
  (goto-char (point-min))
  (let ((i 0))
    (while (= 0 (forward-line 40))
      (setq i (1+ i))
      (insert (format "// edited block %d: %s\n" i (make-string (% (* i 7) 60) ?=)))))
  (goto-char (/ (point-max) 2))
  (beginning-of-line)
  (dotimes (_ 6) (kill-line 1)))

(defun edit-file (file)
  "Visit FILE, edit it, save it; return the buffer."
  (let ((buf (find-file-noselect file)))
    (with-current-buffer buf
      (buffer-enable-undo)
      (c++-mode)
      (font-lock-mode 1)
      (font-lock-ensure)
      (edit-replace "\\bstd::size_t\\b" "std::size_type")
      (edit-replace "\\([a-z_]+\\)_\\b" "\\1_m")
      (indent-region (point-min) (point-max))
      (edit-insert-and-kill)
      (undo-boundary)
      (edit-replace "// edited block" "// EDITED BLOCK")
      (undo-boundary)
      (primitive-undo 1 buffer-undo-list)
      (font-lock-ensure)
      (save-buffer))
    buf))

(let* ((files (directory-files-recursively edit-dir "\\.\\(cpp\\|hpp\\|h\\)\\'"))
       (count 0) (kept 0) (chars 0) (sum 0) (index 0))
  (dolist (file (seq-filter (lambda (_) (= 0 (% (setq index (1+ index)) edit-stride)))
                            (sort files #'string<)))
    (let ((buf (edit-file file)))
      (setq count (1+ count))
      (with-current-buffer buf
        (setq chars (+ chars (buffer-size))
              sum (logand (+ (* sum 31) (sxhash-equal (buffer-string))) #xFFFFFFF)))
      (if (= 0 (% count edit-keep-every))
          (setq kept (1+ kept))
        (kill-buffer buf)))
    (when (= 0 (% count 50)) (garbage-collect)))
  (princ (format "emacs_edit files=%d kept=%d chars=%d checksum=%d\n" count kept chars sum)))
